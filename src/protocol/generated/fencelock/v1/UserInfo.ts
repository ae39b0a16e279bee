// Original file: proto/fencelock/v1/lock.proto


export interface UserInfo {
  'name'?: (string);
  'roles'?: (string)[];
}

export interface UserInfo__Output {
  'name': (string);
  'roles': (string)[];
}
