// Loaded with `node --import` into a worker under test: its Date runs TEST_CLOCK_SHIFT_MS away from the
// machine's, so a crontab entry's minute can be made to come a few seconds after the worker starts.
// Only Date moves; timers and PostgreSQL keep real time.
const shift = Number(process.env.TEST_CLOCK_SHIFT_MS ?? 0);
const RealDate = Date;
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + shift);
    else super(...args);
  }
  static now() {
    return RealDate.now() + shift;
  }
}
globalThis.Date = ShiftedDate;
