// Original file: proto/fencelock/v1/lock.proto


export interface AuthListRequest {
}

export interface AuthListRequest__Output {
}
