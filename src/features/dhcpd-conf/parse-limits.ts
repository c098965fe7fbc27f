/** Bounds on what one reading holds: a hostile or runaway file is reported as not read, never parsed into exhaustion. */
export interface ParseLimits {
  /** Blocks open at once (MAAS's template nests 4: shared-network, subnet, pool or if). */
  maxDepth: number;
  /** Characters of the file and its includes together. */
  maxChars: number;
  /** Declarations and option 6 statements kept. */
  maxNodes: number;
  /** Tokens in one statement or block header. */
  maxStatementTokens: number;
  /** `include` files read, and nested one in another. */
  maxIncludes: number;
  maxIncludeDepth: number;
  /** Refusals (and, apart, unread parts) listed one by one; past this they are only counted: a file of 4 MiB of `}` is 4 million refusals. */
  maxProblemsKept: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxDepth: 64, maxChars: 8 * 1024 * 1024, maxNodes: 100_000, maxStatementTokens: 20_000, maxIncludes: 16, maxIncludeDepth: 4, maxProblemsKept: 20 };
