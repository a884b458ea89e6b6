/**
 * The JSON Schema of job files, generated from the zod schema so the two cannot disagree. Editors use it
 * for completion and help when a job file starts with `"$schema": "./job.schema.json"`.
 */
import { z } from 'zod';
import { jobSchema } from './job-schema.ts';

/** Where the generated schema is committed, relative to the repository root. */
export const JOB_JSON_SCHEMA_PATH = 'jobs/job.schema.json';

/**
 * The schema of a job file as written (defaults shown, `$schema` allowed), as JSON Schema draft-07,
 * the draft every common editor understands.
 *
 * @example jobJsonSchema().properties.pageSize // → { default: 1000, title: 'Page size', type: 'integer', minimum: 1, maximum: 1000, … }
 */
export function jobJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(jobSchema, { io: 'input', target: 'draft-07' }) as Record<string, unknown>;
}

/**
 * The exact text of `jobs/job.schema.json`: 2-space JSON and a final newline.
 *
 * @example await writeFile('jobs/job.schema.json', jobJsonSchemaText());
 */
export function jobJsonSchemaText(): string {
  return `${JSON.stringify(jobJsonSchema(), null, 2)}\n`;
}
