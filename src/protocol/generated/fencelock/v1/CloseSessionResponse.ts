// Original file: proto/fencelock/v1/lock.proto


export interface CloseSessionResponse {
}

export interface CloseSessionResponse__Output {
}
