// Original file: proto/fencelock/v1/lock.proto


export interface WhoAmIRequest {
}

export interface WhoAmIRequest__Output {
}
