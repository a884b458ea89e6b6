import { fileURLToPath } from 'node:url';

/** The real mainnet dataset shared by the project (read-only). */
export const FIXTURE_DIR = fileURLToPath(new URL('../../../shared/fixtures/mainnet', import.meta.url));
