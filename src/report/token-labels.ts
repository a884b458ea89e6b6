/** A contract's row in the report, before it is named. */
export interface TokenRef {
  chainId: string;
  contract: string;
  /** The token's symbol, else its name, else its address (as the warehouse's queries give it). */
  token: string;
}

/**
 * Names each contract of `refs` for the report's charts, one name per (chain, contract), so no two contracts share a
 * series or a row: the token's symbol (or name), with its chain when the warehouse holds several, and with its address
 * when another contract of the report would have the same name (a bridged copy of a token, a fake with a real one's
 * symbol). Pure.
 *
 * @example const name = tokenLabels([{ chainId: '1', contract: '0xa…', token: 'USDC' }, { chainId: '1', contract: '0xb…', token: 'USDC' }]);
 * name({ chainId: '1', contract: '0xa…', token: 'USDC' }) // → 'USDC 0xa…'
 */
export function tokenLabels(refs: readonly TokenRef[]): (ref: TokenRef) => string {
  const key = (r: TokenRef) => `${r.chainId}:${r.contract}`;
  const several = new Set(refs.map((r) => r.chainId)).size > 1;
  const base = (r: TokenRef) => (several ? `${r.token} (chain ${r.chainId})` : r.token);
  const contractsOf = new Map<string, Set<string>>();
  for (const r of refs) {
    const name = base(r);
    contractsOf.set(name, (contractsOf.get(name) ?? new Set()).add(key(r)));
  }
  return (r) => {
    const name = base(r);
    // a token named by its address is unique already
    if ((contractsOf.get(name)?.size ?? 0) < 2 || r.token === r.contract) return name;
    return several ? `${r.token} ${r.contract} (chain ${r.chainId})` : `${r.token} ${r.contract}`;
  };
}
