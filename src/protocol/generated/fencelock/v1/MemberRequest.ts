// Original file: proto/fencelock/v1/lock.proto


export interface MemberRequest {
  'id'?: (string);
}

export interface MemberRequest__Output {
  'id': (string);
}
