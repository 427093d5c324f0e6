/**
 * Shapes of the network guard that other layers name: the DNS resolver a target is checked with.
 *
 * @module
 */
/** Resolves a host name to its IPv4 and IPv6 addresses. Injectable so tests need no real DNS. */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<string[]>;
