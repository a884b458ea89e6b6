import { fileURLToPath } from 'node:url';

/** The real mainnet dataset the tests read (test/fixtures/mainnet; its README.md says where every line comes from). */
export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/mainnet', import.meta.url));
