import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.ts';
import { chooseLogFormat, chooseLogLevel } from './log-format.ts';

describe('chooseLogFormat', () => {
  it('writes readable text on a terminal', () => {
    expect(chooseLogFormat({ isTTY: true, env: {} })).toBe('pretty');
  });

  it('writes JSON lines when stderr is a pipe or a file, as under cron', () => {
    expect(chooseLogFormat({ isTTY: false, env: {} })).toBe('json');
  });

  it('writes JSON lines in CI even on a terminal', () => {
    expect(chooseLogFormat({ isTTY: true, env: { CI: 'true' } })).toBe('json');
  });

  it('lets LOG_FORMAT decide either way', () => {
    expect(chooseLogFormat({ isTTY: true, env: { LOG_FORMAT: 'json' } })).toBe('json');
    expect(chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: 'pretty' } })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: 'pretty', CI: 'true' } })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: ' Pretty ' } })).toBe('pretty');
  });

  it('treats an empty LOG_FORMAT as unset', () => {
    expect(chooseLogFormat({ isTTY: true, env: { LOG_FORMAT: '' } })).toBe('pretty');
    expect(chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: '' } })).toBe('json');
  });

  it('rejects any other LOG_FORMAT, naming the variable, its value and the accepted values', () => {
    const attempt = () => chooseLogFormat({ isTTY: false, env: { LOG_FORMAT: 'text' } });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^LOG_FORMAT is "text": expected json .* or pretty /);
  });
});

describe('chooseLogLevel', () => {
  it("takes LOG_LEVEL in any case, else the command's default; an empty one counts as unset", () => {
    expect(chooseLogLevel({ LOG_LEVEL: 'debug' }, 'info')).toBe('debug');
    expect(chooseLogLevel({ LOG_LEVEL: ' WARN ' }, 'info')).toBe('warn');
    expect(chooseLogLevel({ LOG_LEVEL: 'silent' }, 'info')).toBe('silent');
    expect(chooseLogLevel({}, 'warn')).toBe('warn');
    expect(chooseLogLevel({ LOG_LEVEL: '' }, 'info')).toBe('info');
    expect(chooseLogLevel({ LOG_LEVEL: '  ' }, 'info')).toBe('info');
  });

  it('rejects a level pino does not know, naming the variable, its value and the accepted levels', () => {
    for (const bad of ['verbose', 'warning', '30']) {
      expect(() => chooseLogLevel({ LOG_LEVEL: bad }, 'info')).toThrow(ConfigError);
      expect(() => chooseLogLevel({ LOG_LEVEL: bad }, 'info')).toThrow(`LOG_LEVEL is "${bad}": expected one of fatal, error, warn, info, debug, trace, silent`);
    }
  });
});
