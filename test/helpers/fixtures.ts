import { fileURLToPath } from 'node:url';

/** The real mainnet dataset the tests read (test/fixtures/mainnet; its README.md says where every line comes from). */
export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/mainnet', import.meta.url));

/** Real headers of other chains, a folder per chain id (test/fixtures/chains; its README.md says which rule each exercises). */
export const CHAINS_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/chains', import.meta.url));
