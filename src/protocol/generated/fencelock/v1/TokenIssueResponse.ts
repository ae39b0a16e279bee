// Original file: proto/fencelock/v1/lock.proto


export interface TokenIssueResponse {
  'tokenId'?: (string);
  /**
   * the bearer secret, shown once: only its SHA-256 is stored
   */
  'token'?: (string);
}

export interface TokenIssueResponse__Output {
  'tokenId': (string);
  /**
   * the bearer secret, shown once: only its SHA-256 is stored
   */
  'token': (string);
}
