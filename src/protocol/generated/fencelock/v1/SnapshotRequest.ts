// Original file: proto/fencelock/v1/lock.proto


export interface SnapshotRequest {
}

export interface SnapshotRequest__Output {
}
