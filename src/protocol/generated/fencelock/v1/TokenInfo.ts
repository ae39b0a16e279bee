// Original file: proto/fencelock/v1/lock.proto


export interface TokenInfo {
  'id'?: (string);
  'user'?: (string);
}

export interface TokenInfo__Output {
  'id': (string);
  'user': (string);
}
