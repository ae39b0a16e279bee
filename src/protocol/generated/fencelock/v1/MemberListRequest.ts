// Original file: proto/fencelock/v1/lock.proto


export interface MemberListRequest {
}

export interface MemberListRequest__Output {
}
