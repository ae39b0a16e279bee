// Original file: proto/fencelock/v1/lock.proto


export interface WatchRequest {
  'lock'?: (string);
}

export interface WatchRequest__Output {
  'lock': (string);
}
