/**
 * The protocol leaf module: what client and server must agree on (metadata keys, reasons, limits, fencing
 * headers, the wire types generated from the .proto files). It imports nothing of either side.
 */
export * from './metadata';
export * from './reasons';
export * from './limits';
export * from './fencingHeaders';
export * from './wireInt';
export * from './labels';
