// Original file: proto/fencelock/v1/lock.proto


export interface SemaphoreDescribeRequest {
  'name'?: (string);
}

export interface SemaphoreDescribeRequest__Output {
  'name': (string);
}
