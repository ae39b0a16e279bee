// Original file: proto/fencelock/v1/lock.proto


export interface StatusRequest {
}

export interface StatusRequest__Output {
}
