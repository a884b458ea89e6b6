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
}

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

const ETHEREUM: HashRule = { name: 'ethereum', rlp: ethereumList };

/** Header hash rules by chain id (`chains.md`); a chain absent here has no rule this exporter knows. */
const RULES: ReadonlyMap<number, HashRule> = new Map<number, HashRule>([
  ...[1, 11155111, 17000, 560048].map((id) => [id, ETHEREUM] as const),
  // OP stack: the Ethereum rule; pre-Bedrock blocks have no optional field, and so hash as the plain list
  ...[10, 8453].map((id) => [id, { name: 'op-stack', rlp: ethereumList }] as const),
  [42161, { name: 'arbitrum-nitro', rlp: ethereumList }],
  [137, { name: 'polygon-bor', rlp: ethereumList }],
  [56, { name: 'bnb-parlia', rlp: (h) => encodeFieldList(hexFields(h), PARLIA_FIELDS) }],
  [100, { name: 'gnosis', rlp: (h) => (isAura(h) ? encodeFieldList(auraFields(h), AURA_FIELDS) : ethereumList(h)) }],
  [43114, { name: 'avalanche-coreth', rlp: (h) => encodeFieldList(hexFields(h), CORETH_FIELDS) }],
]);

/** Chains whose block hash is not keccak256 of an RLP header: why their headers cannot be verified. */
const UNVERIFIABLE: ReadonlyMap<number, string> = new Map([[324, 'zkSync Era block hashes are not keccak256 of an RLP header: they cannot be verified from the header alone']]);

/** What a chain's rule says of one header. */
export type HeaderVerdict =
  /** The header hashes to its `hash` by its chain's rule. */
  | { block: number; rule: string; verified: true }
  /** It does not (or a field cannot be encoded): the header is not what the chain made. */
  | { block: number; rule: string; verified: false; failed: true; reason: string }
  /** The chain has no rule this exporter knows: the header can be kept, unverified, for this reason. */
  | { block: number; verified: false; failed: false; reason: string };

/**
 * Checks a header against its chain's hash rule (`chains.md`): Ethereum's list for Ethereum, the OP stack,
 * Arbitrum and Polygon; up to `requestsHash` for BNB Smart Chain; Gnosis' AuRa list before its merge;
 * Avalanche's list with `extDataHash`. zkSync Era, and chains not listed, have none.
 *
 * @example verifyChainHeader(8453, baseHeader) // → { block: 50543461, rule: 'op-stack', verified: true }
 * verifyChainHeader(324, header) // → { block: …, verified: false, failed: false, reason: 'zkSync Era block hashes are not …' }
 */
export function verifyChainHeader(chainId: number, header: ChainHeader): HeaderVerdict {
  const block = blockNumberOf(header);
  const rule = RULES.get(chainId);
  if (!rule) {
    const reason = UNVERIFIABLE.get(chainId) ?? `chain ${chainId}'s block hash rule is not one this exporter knows`;
    return { block, verified: false, failed: false, reason };
  }
  const fail = (reason: string) => ({ block, rule: rule.name, verified: false as const, failed: true as const, reason });
  if (typeof header.hash !== 'string') return fail(`block ${block} has no hash to verify`);
  let computed: string;
  try {
    computed = rlpHash(rule.rlp(header));
  } catch (err) {
    if (err instanceof HeaderEncodingError) return fail(`block ${block}: ${err.message}`);
    throw err;
  }
  if (computed !== header.hash.toLowerCase()) return fail(`block ${block} does not hash to ${header.hash} by the ${rule.name} rule: its fields hash to ${computed}`);
  return { block, rule: rule.name, verified: true };
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
