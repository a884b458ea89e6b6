import { writeDataset } from '../dataset/write.ts';
import { generateSyntheticDataset, SYNTHETIC_DEFAULTS } from '../devnet/synthetic.ts';
import { parseDevnetOptions, type DevnetFlags } from './devnet-options.ts';

/** `erc20-etl devnet dump --out DIR [generation flags]`: writes the synthetic chain as a dataset folder. */
export async function dumpDevnet(flags: DevnetFlags & { out: string }): Promise<void> {
  const { out, ...rest } = flags;
  const options = parseDevnetOptions(rest, SYNTHETIC_DEFAULTS);
  const dataset = generateSyntheticDataset(options.synthetic, { amounts: options.amounts, chainId: options.chainId });
  await writeDataset(out, dataset);
  process.stdout.write(
    `erc20-etl devnet dump: wrote ${dataset.headers.length} headers, ${dataset.transfers.length} transfers, ` + `${dataset.tokens.length} token lines to ${out}\n`,
  );
}
