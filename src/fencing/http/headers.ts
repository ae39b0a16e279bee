// The header names and fencingHeaders() are shared with the client library: one source, in the leaf module.
export * from '../../protocol/fencingHeaders';
