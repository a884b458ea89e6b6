import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../src/cli/main.ts';
import { REPO_DIR } from './helpers/cli.ts';

// No container runtime runs here, so the file is checked for what it must hold; the commands it runs are the
// ones test/workers.test.ts runs against a real PostgreSQL.
interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string | string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const compose = parse(readFileSync(join(REPO_DIR, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const words = (command: Service['command']) => (Array.isArray(command) ? command : (command ?? '').split(/\s+/).filter(Boolean));

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, a migration, and two workers on its queue', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(['migrate', 'postgres', 'worker-1', 'worker-2']);
    expect(words(services['migrate']!.command)).toEqual(['migrate']);
    expect(services['migrate']!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const ports = new Set<string>();
    for (const name of ['worker-1', 'worker-2']) {
      const worker = services[name]!;
      expect(worker.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
      expect(worker.environment?.['DATABASE_URL']).toMatch(/@postgres:5432\//);
      // the API's URL (with the project id) comes from the environment of whoever runs compose
      // biome-ignore lint/suspicious/noTemplateCurlyInString: docker-compose's own interpolation, written as the file has it
      expect(worker.environment?.['CHAIN_API_URL']).toBe('${CHAIN_API_URL:-}');
      for (const p of worker.ports ?? []) {
        expect(p).toMatch(/^127\.0\.0\.1:\d+:9464$/);
        ports.add(p.split(':')[1]!);
      }
      const [command, ...flags] = words(worker.command);
      expect(command).toBe('worker');
      const known = buildProgram()
        .commands.find((c) => c.name() === 'worker')!
        .options.map((o) => o.long);
      for (const flag of flags.filter((f) => f.startsWith('--'))) expect(known).toContain(flag);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: docker-compose's own interpolation, written as the file has it
      expect(flags.join(' ')).toContain('${WORKER_FLAGS:-}');
    }
    expect(ports.size).toBe(2);
  });

  it('builds its image from files the checkout has, and leaves the test data out of the build', () => {
    const build = compose.services['worker-1']!.build!;
    const dockerfile = readFileSync(join(REPO_DIR, build.context, build.dockerfile), 'utf8');
    // COPY lines from the build context (not `COPY --from=build …`, which copies from the image's build stage)
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(copied.length).toBeGreaterThan(3);
    for (const path of copied) expect(existsSync(join(REPO_DIR, build.context, path)), path).toBe(true);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const ignored = readFileSync(join(REPO_DIR, '.dockerignore'), 'utf8').split('\n');
    for (const path of ['.data', 'node_modules', '.git', 'dist']) expect(ignored).toContain(path);
  });

  it('runs the compiled JavaScript in its last stage, with production dependencies only, not as root', () => {
    const build = compose.services['worker-1']!.build!;
    const dockerfile = readFileSync(join(REPO_DIR, build.context, build.dockerfile), 'utf8');
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const runtime = stages.at(-1)!;
    const install = /^RUN npm ci (.*)$/m.exec(runtime)?.[1]?.split(/\s+/) ?? [];
    expect(install).toEqual(expect.arrayContaining(['--omit=dev', '--ignore-scripts']));
    expect(runtime).toMatch(/^COPY --from=\S+ \S*dist dist$/m);
    expect(runtime).toMatch(/^USER (?!root\b|0\b)\S+$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "bin\/erc20-etl\.js"\]$/m);
    expect(runtime).not.toMatch(/\btsx\b/);
  });
});
