import { CONSENSUS_FIELDS } from './header-fields.ts';
import { encodeFieldList, HeaderEncodingError, rlpHash, type RlpField } from './header-hash.ts';
import { toQuantity } from './hex.ts';

/** A header as a node of any chain answers it: hex text, and numbers where a family writes them so (Gnosis' `step`). */
export type ChainHeader = Readonly<Record<string, unknown>>;

/**
 * How a chain's block hash is made from its header (`chains.md`): the RLP list a rule encodes, hashed with
 * keccak256. `rlp` throws a HeaderEncodingError naming a field that cannot be encoded.
 */
interface HashRule {
  name: string;
  rlp(header: ChainHeader): Uint8Array;
  /**
   * Every key the rule accounts for: the fields it hashes (under each name a node gives them) and the keys its
   * nodes' JSON adds outside the hash. A header that does not hash to its `hash` and has a key besides these may
   * carry a consensus field the rule cannot encode (a new fork's): it is unverifiable, not failed.
   */
  keys: ReadonlySet<string>;
  /** The Ethereum fields a header of this rule has others in place of (Gnosis under AuRa: `mixHash` and `nonce`). */
  replaced?(header: ChainHeader): readonly string[];
}

/** Keys of every node's block JSON that no rule hashes: the hash itself, and what `eth_getBlockBy*` adds to the header. */
const OUTSIDE_HASH = ['hash', 'size', 'totalDifficulty', 'transactions', 'uncles', 'withdrawals'];

/** The key set of a rule that hashes `fields` and whose nodes add `more` outside the hash. */
const keysOf = (fields: readonly RlpField[], more: readonly string[] = []): ReadonlySet<string> => new Set([...fields.map((f) => f.key), ...OUTSIDE_HASH, ...more]);

/** The Ethereum list: the consensus fields in fork order, through the last one the header has. */
const ethereumList = (header: ChainHeader) => encodeFieldList(hexFields(header), CONSENSUS_FIELDS);

/** BNB Smart Chain hashes the Ethereum list up to `requestsHash`: a later field is not part of it. */
const PARLIA_FIELDS = CONSENSUS_FIELDS.slice(0, CONSENSUS_FIELDS.findIndex((f) => f.key === 'requestsHash') + 1);

/** Gnosis under AuRa: `step` and `signature` in place of `mixHash` and `nonce`, then `baseFeePerGas` where present. */
const AURA_FIELDS: readonly RlpField[] = [
  ...CONSENSUS_FIELDS.slice(
    0,
    CONSENSUS_FIELDS.findIndex((f) => f.key === 'mixHash'),
  ),
  { key: 'step', kind: 'quantity' },
  { key: 'signature', kind: 'bytes' },
  { key: 'baseFeePerGas', kind: 'quantity' },
];

/** Avalanche's coreth: the Ethereum list through `nonce`, `extDataHash`, then its own optional fields (`gen_header_serializable_rlp.go`). */
const CORETH_FIELDS: readonly RlpField[] = [
  ...CONSENSUS_FIELDS.slice(0, CONSENSUS_FIELDS.findIndex((f) => f.key === 'nonce') + 1),
  { key: 'extDataHash', kind: 'hash' },
  { key: 'baseFeePerGas', kind: 'quantity' },
  { key: 'extDataGasUsed', kind: 'quantity' },
  { key: 'blockGasCost', kind: 'quantity' },
  { key: 'blobGasUsed', kind: 'quantity' },
  { key: 'excessBlobGas', kind: 'quantity' },
  { key: 'parentBeaconBlockRoot', kind: 'hash' },
  { key: 'timestampMilliseconds', kind: 'quantity' },
  { key: 'minDelayExcess', kind: 'quantity' },
];

const ETHEREUM_KEYS = keysOf(CONSENSUS_FIELDS);
const ETHEREUM: HashRule = { name: 'ethereum', rlp: ethereumList, keys: ETHEREUM_KEYS };

/** Gnosis' AuRa fields under every name a node gives them (Nethermind, Erigon, older Erigon), and Nethermind's `author`. */
const AURA_KEYS = ['step', 'signature', 'auraStep', 'auraSeal', 'AuRaStep', 'AuRaSeal', 'author'];

/** Header hash rules by chain id (`chains.md`); a chain absent here has no rule this exporter knows. */
const RULES: ReadonlyMap<number, HashRule> = new Map<number, HashRule>([
  ...[1, 11155111, 17000, 560048].map((id) => [id, ETHEREUM] as const),
  // OP stack: the Ethereum rule; pre-Bedrock blocks have no optional field, and so hash as the plain list
  ...[10, 8453].map((id) => [id, { name: 'op-stack', rlp: ethereumList, keys: ETHEREUM_KEYS }] as const),
  [42161, { name: 'arbitrum-nitro', rlp: ethereumList, keys: keysOf(CONSENSUS_FIELDS, ['l1BlockNumber', 'sendRoot', 'sendCount']) }],
  [137, { name: 'polygon-bor', rlp: ethereumList, keys: ETHEREUM_KEYS }],
  [56, { name: 'bnb-parlia', rlp: (h) => encodeFieldList(hexFields(h), PARLIA_FIELDS), keys: keysOf(PARLIA_FIELDS) }],
  [
    100,
    {
      name: 'gnosis',
      rlp: (h) => (isAura(h) ? encodeFieldList(auraFields(h), AURA_FIELDS) : ethereumList(h)),
      keys: keysOf(CONSENSUS_FIELDS, AURA_KEYS),
      replaced: (h) => (isAura(h) ? ['mixHash', 'nonce'] : []),
    },
  ],
  [43114, { name: 'avalanche-coreth', rlp: (h) => encodeFieldList(hexFields(h), CORETH_FIELDS), keys: keysOf(CORETH_FIELDS, ['blockExtraData']) }],
]);

/** Chains whose block hash is not keccak256 of an RLP header: why their headers cannot be verified. */
const UNVERIFIABLE: ReadonlyMap<number, string> = new Map([[324, 'zkSync Era block hashes are not keccak256 of an RLP header: they cannot be verified from the header alone']]);

/** What a chain's rule says of one header. */
export type HeaderVerdict =
  /** The header hashes to its `hash` by its chain's rule. */
  | { block: number; rule: string; verified: true }
  /**
   * It does not (`computed`: what its fields hash to), or a field cannot be encoded (`field`, and the encoder's
   * `message`): the header is not what the chain made.
   */
  | { block: number; rule: string; verified: false; failed: true; reason: string; computed?: string; field?: { key: string; message: string } }
  /**
   * It cannot be verified, for this reason: the chain has no rule this exporter knows; or (`rule` and `fields` given)
   * the header does not hash by its chain's rule and has `fields` the rule does not know, which may be consensus
   * fields of a fork it cannot encode. The header can be kept, unverified.
   */
  | { block: number; verified: false; failed: false; reason: string; rule?: string; fields?: string[] };

/**
 * Checks a header against its chain's hash rule (`chains.md`): Ethereum's list for Ethereum, the OP stack,
 * Arbitrum and Polygon; up to `requestsHash` for BNB Smart Chain; Gnosis' AuRa list before its merge;
 * Avalanche's list with `extDataHash`. zkSync Era, and chains not listed, have none. A header that does not hash
 * by its rule fails, unless it has keys the rule does not know (non-null): then it may carry a field of a fork the
 * rule cannot encode, and is unverifiable, naming them.
 *
 * @example verifyChainHeader(8453, baseHeader) // → { block: 50543461, rule: 'op-stack', verified: true }
 * verifyChainHeader(324, header) // → { block: …, verified: false, failed: false, reason: 'zkSync Era block hashes are not …' }
 */
export function verifyChainHeader(chainId: number, header: ChainHeader): HeaderVerdict {
  const block = blockNumberOf(header);
  const rule = RULES.get(chainId);
  if (!rule) return { block, verified: false, failed: false, reason: noRuleReason(chainId) };
  const failed = { block, rule: rule.name, verified: false as const, failed: true as const };
  if (typeof header.hash !== 'string') return { ...failed, reason: `block ${block} has no hash to verify` };
  let computed: string;
  try {
    computed = rlpHash(rule.rlp(header));
  } catch (err) {
    if (err instanceof HeaderEncodingError) return { ...failed, reason: `block ${block}: ${err.message}`, field: { key: err.field, message: err.message } };
    throw err;
  }
  if (computed === header.hash.toLowerCase()) return { block, rule: rule.name, verified: true };
  const mismatch = `block ${block} does not hash to ${header.hash} by the ${rule.name} rule: its fields hash to ${computed}`;
  const fields = Object.keys(header).filter((k) => !rule.keys.has(k) && header[k] !== null && header[k] !== undefined);
  if (!fields.length) return { ...failed, reason: mismatch, computed };
  const reason = `${mismatch}, and it has fields the rule does not know (${fields.join(', ')}): perhaps consensus fields of a fork this exporter cannot encode yet`;
  return { block, rule: rule.name, verified: false, failed: false, reason, fields };
}

/**
 * The block hash of `header` by chain `chainId`'s rule (`chains.md`), Ethereum's for a chain without one: how the
 * reference server hashes the headers it makes. Throws a HeaderEncodingError naming a field the rule cannot encode.
 *
 * @example chainHeaderHash(1, header) // → computeHeaderHash(header)
 * chainHeaderHash(43114, corethHeader) // → keccak256 of the coreth list, extDataHash after nonce
 */
export function chainHeaderHash(chainId: number, header: ChainHeader): string {
  return rlpHash((RULES.get(chainId) ?? ETHEREUM).rlp(header));
}

/**
 * Why no header of this chain can be verified (it has no rule this exporter knows), or undefined when it has a rule.
 *
 * @example unverifiableChainReason(324) // → 'zkSync Era block hashes are not keccak256 of an RLP header: …'
 * unverifiableChainReason(8453) // → undefined
 */
export function unverifiableChainReason(chainId: number): string | undefined {
  return RULES.has(chainId) ? undefined : noRuleReason(chainId);
}

const noRuleReason = (chainId: number): string => UNVERIFIABLE.get(chainId) ?? `chain ${chainId}'s block hash rule is not one this exporter knows`;

/**
 * The Ethereum header fields this header of its chain has others in place of, so it may lack them: Gnosis under
 * AuRa has `step` and `signature` (or Erigon's `auraStep`, `auraSeal`) in place of `mixHash` and `nonce`. None for
 * other headers, and for chains without a rule.
 *
 * @example replacedEthereumFields(100, gnosisAuraHeader) // → ['mixHash', 'nonce']
 */
export function replacedEthereumFields(chainId: number, header: ChainHeader): readonly string[] {
  return RULES.get(chainId)?.replaced?.(header) ?? [];
}

/** The header's string fields, as the Ethereum encoder reads them (numbers and other values left out). */
function hexFields(header: ChainHeader): Record<string, string | null | undefined> {
  const out: Record<string, string | null | undefined> = {};
  for (const [k, v] of Object.entries(header)) if (typeof v === 'string' || v === null) out[k] = v;
  return out;
}

/** A pre-merge Gnosis header: Nethermind's `step`/`signature`, or Erigon's `auraStep`/`auraSeal` (older: `AuRaStep`/`AuRaSeal`). */
function isAura(header: ChainHeader): boolean {
  return auraStep(header) !== undefined || auraSeal(header) !== undefined;
}

const auraStep = (h: ChainHeader): unknown => h.step ?? h.auraStep ?? h.AuRaStep;
const auraSeal = (h: ChainHeader): unknown => h.signature ?? h.auraSeal ?? h.AuRaSeal;

/** The AuRa fields under one name each, `step` as a hex quantity (Nethermind writes it as a decimal number). */
function auraFields(header: ChainHeader): Record<string, string | null | undefined> {
  const step = auraStep(header);
  const out = hexFields(header);
  out.step = typeof step === 'number' && Number.isSafeInteger(step) && step >= 0 ? toQuantity(step) : typeof step === 'string' ? step : undefined;
  const signature = auraSeal(header);
  out.signature = typeof signature === 'string' ? signature : undefined;
  return out;
}

/** The block number a header states, for messages (−1 when it states none readable). */
function blockNumberOf(header: ChainHeader): number {
  const n = header.number;
  if (typeof n === 'string' && /^0x[0-9a-fA-F]{1,13}$/.test(n)) return Number.parseInt(n, 16);
  if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
  return -1;
}
