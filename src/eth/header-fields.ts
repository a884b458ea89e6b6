import { isHexData, isHexQuantity } from './hex.ts';

/**
 * The block header as `erigon_getHeaderByHash` returns it: every value is `0x` hex text, and a field
 * that the block's fork predates is `null`.
 */
export type HeaderJson = Record<HeaderKey, string | null> & { hash: string };

/** How a field is RLP-encoded: fixed-size data, variable-size bytes, or a minimal big-endian quantity. */
export type FieldKind = 'hash' | 'address' | 'bloom' | 'bytes' | 'nonce' | 'quantity';

/**
 * The header fields in consensus (RLP) order, each with its encoding and the fork that introduced it.
 * `keccak256(rlp(fields up to the last non-null one))` is the block hash.
 */
export const CONSENSUS_FIELDS = [
  { key: 'parentHash', kind: 'hash', fork: 'frontier' },
  { key: 'sha3Uncles', kind: 'hash', fork: 'frontier' },
  { key: 'miner', kind: 'address', fork: 'frontier' },
  { key: 'stateRoot', kind: 'hash', fork: 'frontier' },
  { key: 'transactionsRoot', kind: 'hash', fork: 'frontier' },
  { key: 'receiptsRoot', kind: 'hash', fork: 'frontier' },
  { key: 'logsBloom', kind: 'bloom', fork: 'frontier' },
  { key: 'difficulty', kind: 'quantity', fork: 'frontier' },
  { key: 'number', kind: 'quantity', fork: 'frontier' },
  { key: 'gasLimit', kind: 'quantity', fork: 'frontier' },
  { key: 'gasUsed', kind: 'quantity', fork: 'frontier' },
  { key: 'timestamp', kind: 'quantity', fork: 'frontier' },
  { key: 'extraData', kind: 'bytes', fork: 'frontier' },
  { key: 'mixHash', kind: 'hash', fork: 'frontier' },
  { key: 'nonce', kind: 'nonce', fork: 'frontier' },
  { key: 'baseFeePerGas', kind: 'quantity', fork: 'london' },
  { key: 'withdrawalsRoot', kind: 'hash', fork: 'shanghai' },
  { key: 'blobGasUsed', kind: 'quantity', fork: 'cancun' },
  { key: 'excessBlobGas', kind: 'quantity', fork: 'cancun' },
  { key: 'parentBeaconBlockRoot', kind: 'hash', fork: 'cancun' },
  { key: 'requestsHash', kind: 'hash', fork: 'prague' },
  { key: 'blockAccessListHash', kind: 'hash', fork: 'amsterdam' },
] as const satisfies readonly { key: string; kind: FieldKind; fork: string }[];

/** Bytes of a field of each fixed-size kind; `bytes` and `quantity` fields have no fixed size. */
export const FIXED_BYTES: Readonly<Partial<Record<FieldKind, number>>> = { hash: 32, address: 20, bloom: 256, nonce: 8 };

/**
 * Whether `value` is text a field of this kind can hold: a minimal `0x` hex quantity, or `0x` hex data of
 * the kind's size (any even number of digits for `bytes`).
 *
 * @example isFieldHex('address', '0x1234') // → false (an address is 20 bytes)
 */
export function isFieldHex(kind: FieldKind, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  return kind === 'quantity' ? isHexQuantity(value) : isHexData(value, FIXED_BYTES[kind]);
}

/**
 * What a field of this kind must hold, worded for the `expected …, got …` of a message.
 *
 * @example fieldExpectation('hash') // → '32 bytes of 0x hex'
 */
export function fieldExpectation(kind: FieldKind): string {
  if (kind === 'quantity') return 'a minimal 0x hex quantity';
  const size = FIXED_BYTES[kind];
  return size === undefined ? '0x hex bytes' : `${size} bytes of 0x hex`;
}

export type ConsensusKey = (typeof CONSENSUS_FIELDS)[number]['key'];
export type HeaderKey = ConsensusKey | 'hash';

/** Fields that may be null: the ones a fork after Frontier introduced. */
export const FORK_KEYS: readonly ConsensusKey[] = CONSENSUS_FIELDS.filter((f) => f.fork !== 'frontier').map((f) => f.key);

/**
 * Erigon's key set and order for a header result, as recorded in Erigon's own test vectors
 * (`test/fixtures/mainnet/vectors/erigon_getHeaderByHash/test_01.json`).
 */
export const ERIGON_HEADER_KEYS: readonly HeaderKey[] = [
  'requestsHash',
  'baseFeePerGas',
  'blobGasUsed',
  'difficulty',
  'excessBlobGas',
  'extraData',
  'gasLimit',
  'gasUsed',
  'hash',
  'logsBloom',
  'miner',
  'mixHash',
  'nonce',
  'number',
  'parentBeaconBlockRoot',
  'parentHash',
  'receiptsRoot',
  'sha3Uncles',
  'stateRoot',
  'timestamp',
  'transactionsRoot',
  'withdrawalsRoot',
  'blockAccessListHash',
];

const FORK_KEY_SET = new Set<string>(FORK_KEYS);
const ERIGON_HEADER_KEY_SET: ReadonlySet<string> = new Set(ERIGON_HEADER_KEYS);

/**
 * Returns the header with exactly Erigon's key set, in Erigon's order: absent fork keys become null, and so do
 * the keys of `mayLack` (fields a chain's header has others in place of: Gnosis' AuRa has no `mixHash`, `nonce`);
 * unknown keys are left out.
 *
 * @example toErigonHeader({ ...londonHeader, size: '0x1' }) // → no `size`, `withdrawalsRoot: null`, …
 */
export function toErigonHeader(input: Readonly<Record<string, unknown>>, mayLack: readonly string[] = []): HeaderJson {
  const out: Record<string, string | null> = {};
  for (const key of ERIGON_HEADER_KEYS) {
    const value = input[key];
    if (typeof value === 'string') out[key] = value;
    else if ((value === null || value === undefined) && (FORK_KEY_SET.has(key) || mayLack.includes(key))) out[key] = null;
    else throw new TypeError(`header field ${key}: expected 0x hex text, got ${JSON.stringify(value) ?? 'nothing'}`);
  }
  return out as HeaderJson;
}

/** The keys of a header object that are not in Erigon's key set (older or newer nodes add some). */
export function unknownHeaderKeys(input: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(input).filter((k) => !ERIGON_HEADER_KEY_SET.has(k));
}
