// Original file: proto/fencelock/v1/lock.proto


export interface GetRequest {
  'key'?: (string);
  /**
   * true: answer from this node's state without a ReadIndex round
   */
  'staleOk'?: (boolean);
}

export interface GetRequest__Output {
  'key': (string);
  /**
   * true: answer from this node's state without a ReadIndex round
   */
  'staleOk': (boolean);
}
