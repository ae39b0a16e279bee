// Original file: proto/fencelock/v1/lock.proto


export interface MemberAddRequest {
  'id'?: (string);
  'clientAddress'?: (string);
  'peerAddress'?: (string);
}

export interface MemberAddRequest__Output {
  'id': (string);
  'clientAddress': (string);
  'peerAddress': (string);
}
