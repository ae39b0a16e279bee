// Original file: proto/fencelock/v1/lock.proto


export interface DescribeRequest {
  'lock'?: (string);
}

export interface DescribeRequest__Output {
  'lock': (string);
}
