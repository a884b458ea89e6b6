/**
 * Writes `jobs/job.schema.json` from the zod schema: `tsx src/config/write-json-schema.ts`.
 * Run it after changing `job-schema.ts`; a test fails while the committed file is stale.
 */
import { writeFile } from 'node:fs/promises';
import { JOB_JSON_SCHEMA_PATH, jobJsonSchemaText } from './json-schema.ts';

const target = new URL(`../../${JOB_JSON_SCHEMA_PATH}`, import.meta.url);
await writeFile(target, jobJsonSchemaText());
console.log(`wrote ${JOB_JSON_SCHEMA_PATH}`);
