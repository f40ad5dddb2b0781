// Intl.DateTimeFormat (ECMA-402 chapter 11), in the Gregorian calendar, and Date.prototype's
// toLocaleString, toLocaleDateString and toLocaleTimeString through it. The run's default time
// zone is UTC: a sandbox has no host zone, and a script names the zone it wants.
(native, internal) => {
  'use strict';
  const I = internal.intl;
  const { natives, getOption } = I;

  const COMPONENTS = [
    ['weekday', ['narrow', 'short', 'long'], { narrow: 'EEEEE', short: 'E', long: 'EEEE' }],
    ['era', ['narrow', 'short', 'long'], { narrow: 'GGGGG', short: 'G', long: 'GGGG' }],
    ['year', ['2-digit', 'numeric'], { '2-digit': 'yy', numeric: 'y' }],
    ['month', ['2-digit', 'numeric', 'narrow', 'short', 'long'],
      { '2-digit': 'MM', numeric: 'M', narrow: 'MMMMM', short: 'MMM', long: 'MMMM' }],
    ['day', ['2-digit', 'numeric'], { '2-digit': 'dd', numeric: 'd' }],
    ['dayPeriod', ['narrow', 'short', 'long'], { narrow: 'BBBBB', short: 'B', long: 'BBBB' }],
    ['hour', ['2-digit', 'numeric'], null],
    ['minute', ['2-digit', 'numeric'], { '2-digit': 'mm', numeric: 'm' }],
    ['second', ['2-digit', 'numeric'], { '2-digit': 'ss', numeric: 's' }],
    ['fractionalSecondDigits', null, null],
    ['timeZoneName', ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'],
      { short: 'z', long: 'zzzz', shortOffset: 'O', longOffset: 'OOOO', shortGeneric: 'v', longGeneric: 'vvvv' }],
  ];
  const DATE_STYLES = { full: 'yMMMMEEEEd', long: 'yMMMMd', medium: 'yMMMd', short: 'yMd' };
  const TIME_STYLES = { full: 'jmszzzz', long: 'jmsz', medium: 'jms', short: 'jm' };
  const STYLES = ['full', 'long', 'medium', 'short'];

  /** The locale's own hour cycle, read from how it writes 13:00. */
  const localeHourCycle = (dataLocale) => {
    const parts = natives.formatDate(dataLocale, 'j', 'UTC', 13 * 3600 * 1000);
    const hour = parts.find((p) => p[0] === 'hour');
    return hour !== undefined && hour[1].includes('13') ? 'h23' : 'h12';
  };

  const formats = I.slots('DateTimeFormat');

  class DateTimeFormat {
    constructor(locales = undefined, options = undefined) {
      const requested = I.canonicalizeLocaleList(locales);
      options = I.coerceOptions(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const calendar = I.checkType(getOption(options, 'calendar', 'string'), 'calendar');
      const nu = I.checkType(getOption(options, 'numberingSystem', 'string'), 'numberingSystem');
      const hour12 = getOption(options, 'hour12', 'boolean');
      let hourCycle = getOption(options, 'hourCycle', 'string', ['h11', 'h12', 'h23', 'h24']);
      if (hour12 !== undefined) hourCycle = null;
      const resolved = I.resolveLocale(requested, ['ca', 'hc', 'nu'], {
        ca: calendar === undefined ? undefined : 'gregory',
        hc: hourCycle ?? undefined,
        nu,
      });
      const state = { locale: resolved.locale, calendar: 'gregory' };
      let zone = options.timeZone;
      state.timeZone = zone === undefined ? 'UTC' : natives.timeZone(String(zone));
      const chosen = {};
      let anyComponent = false;
      for (const [name, values] of COMPONENTS) {
        let value;
        if (name === 'fractionalSecondDigits') {
          value = I.getNumberOption(options, name, 1, 3, undefined);
        } else {
          value = getOption(options, name, 'string', values);
        }
        if (value !== undefined) {
          chosen[name] = value;
          anyComponent = true;
        }
      }
      getOption(options, 'formatMatcher', 'string', ['basic', 'best fit'], 'best fit');
      const dateStyle = getOption(options, 'dateStyle', 'string', STYLES);
      const timeStyle = getOption(options, 'timeStyle', 'string', STYLES);
      if ((dateStyle !== undefined || timeStyle !== undefined) && anyComponent) {
        throw new TypeError("dateStyle and timeStyle can't be used with individual date-time options");
      }
      state.required = this.constructor === DateTimeFormat ? 'any' : 'any';
      state.dateStyle = dateStyle;
      state.timeStyle = timeStyle;
      state.components = chosen;
      state.hour12 = hour12;
      state.hourCycleOption = resolved.keywords.hc;
      state.baseLocale = resolved.base;
      state.numberingSystem = nu ?? resolved.keywords.nu ?? 'latn';
      formats.set(this, state);
      setDefaults(state, 'any', 'date');
    }

    get format() {
      const state = formats.get(this, 'format');
      if (state.bound === undefined) {
        state.bound = (date) => I.joinParts(formatParts(state, date));
      }
      return state.bound;
    }

    formatToParts(date) {
      return I.partsToObjects(formatParts(formats.get(this, 'formatToParts'), date));
    }

    formatRange(start, end) {
      const state = formats.get(this, 'formatRange');
      if (start === undefined || end === undefined) throw new TypeError('start and end are required');
      const a = I.joinParts(formatParts(state, start));
      const b = I.joinParts(formatParts(state, end));
      return a === b ? a : `${a} – ${b}`;
    }

    formatRangeToParts(start, end) {
      const state = formats.get(this, 'formatRangeToParts');
      if (start === undefined || end === undefined) throw new TypeError('start and end are required');
      const a = formatParts(state, start);
      const b = formatParts(state, end);
      if (I.joinParts(a) === I.joinParts(b)) {
        return I.partsToObjects(a, (p) => (p.source = 'shared'));
      }
      return [
        ...I.partsToObjects(a, (p) => (p.source = 'startRange')),
        { type: 'literal', value: ' – ', source: 'shared' },
        ...I.partsToObjects(b, (p) => (p.source = 'endRange')),
      ];
    }

    resolvedOptions() {
      const s = formats.get(this, 'resolvedOptions');
      const out = {
        locale: s.locale,
        calendar: s.calendar,
        numberingSystem: s.numberingSystem,
        timeZone: s.timeZone,
      };
      if (s.hourCycle !== undefined) {
        out.hourCycle = s.hourCycle;
        out.hour12 = s.hourCycle === 'h11' || s.hourCycle === 'h12';
      }
      for (const [name] of COMPONENTS) {
        if (s.components[name] !== undefined) out[name] = s.components[name];
      }
      if (s.dateStyle !== undefined) out.dateStyle = s.dateStyle;
      if (s.timeStyle !== undefined) out.timeStyle = s.timeStyle;
      return out;
    }
  }

  /** Fills in the defaults of ToDateTimeOptions when no component or style is given, and
   * builds the skeleton and locale the natives take. */
  const setDefaults = (state, required, defaults) => {
    const c = state.components;
    if (state.dateStyle === undefined && state.timeStyle === undefined) {
      let needDefaults = true;
      if (required === 'date' || required === 'any') {
        for (const name of ['weekday', 'year', 'month', 'day']) if (c[name] !== undefined) needDefaults = false;
      }
      if (required === 'time' || required === 'any') {
        for (const name of ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits']) {
          if (c[name] !== undefined) needDefaults = false;
        }
      }
      if (needDefaults && (defaults === 'date' || defaults === 'all')) {
        c.year = c.month = c.day = 'numeric';
      }
      if (needDefaults && (defaults === 'time' || defaults === 'all')) {
        c.hour = c.minute = c.second = 'numeric';
      }
    }
    const hasHour = c.hour !== undefined || state.timeStyle !== undefined;
    let hourCycle;
    if (hasHour) {
      const localeCycle = localeHourCycle(state.baseLocale);
      if (state.hour12 !== undefined) {
        hourCycle = state.hour12 ? (localeCycle === 'h23' ? 'h12' : localeCycle) : 'h23';
        if (state.hour12 && state.baseLocale.startsWith('ja')) hourCycle = 'h11';
      } else {
        hourCycle = state.hourCycleOption ?? localeCycle;
      }
      state.hourCycle = hourCycle;
    }
    const hourLetter = hourCycle === undefined ? 'j' : hourCycle === 'h11' || hourCycle === 'h12' ? 'h' : 'H';
    let skeleton = '';
    if (state.dateStyle !== undefined) skeleton += DATE_STYLES[state.dateStyle];
    if (state.timeStyle !== undefined) skeleton += TIME_STYLES[state.timeStyle].replace('j', hourLetter);
    for (const [name, , letters] of COMPONENTS) {
      const value = c[name];
      if (value === undefined) continue;
      if (name === 'hour') skeleton += value === '2-digit' ? hourLetter + hourLetter : hourLetter;
      else if (name === 'fractionalSecondDigits') skeleton += 'S'.repeat(value);
      else skeleton += letters[value];
    }
    state.skeleton = skeleton;
    const keywords = [];
    if (state.numberingSystem !== 'latn') keywords.push(`nu-${state.numberingSystem}`);
    state.dataLocale = state.baseLocale + (keywords.length ? `-u-${keywords.join('-')}` : '');
  };

  const formatParts = (state, date) => {
    let x = date === undefined ? Date.now() : Number(date);
    if (!Number.isFinite(x) || Math.abs(x) > 8.64e15) throw new RangeError('Invalid time value');
    x = Math.trunc(x) + 0;
    return natives.formatDate(state.dataLocale, state.skeleton, state.timeZone, x);
  };

  I.install('DateTimeFormat', DateTimeFormat);

  /** A formatter for Date.prototype's locale methods, with their own defaults. */
  const dateFormatter = (locales, options, required, defaults) => {
    const format = new DateTimeFormat(locales, options);
    const state = formats.get(format, 'toLocaleString');
    const c = state.components;
    if (required === 'time' && state.dateStyle === undefined && state.timeStyle === undefined) {
      if (c.year === 'numeric' && c.month === 'numeric' && c.day === 'numeric' && options?.year === undefined) {
        delete c.year;
        delete c.month;
        delete c.day;
      }
    }
    if (defaults === 'all' && state.dateStyle === undefined && state.timeStyle === undefined) {
      const onlyDefaults = !['weekday', 'year', 'month', 'day', 'dayPeriod', 'hour', 'minute', 'second',
        'fractionalSecondDigits'].some((n) => options?.[n] !== undefined);
      if (onlyDefaults) c.hour = c.minute = c.second = 'numeric';
    }
    setDefaults(state, required, defaults);
    return format;
  };

  const define = (name, required, defaults) => {
    Object.defineProperty(Date.prototype, name, {
      value: {
        [name](locales = undefined, options = undefined) {
          const time = Date.prototype.getTime.call(this);
          if (Number.isNaN(time)) return 'Invalid Date';
          return dateFormatter(locales, options, required, defaults).format(time);
        },
      }[name],
      writable: true,
      configurable: true,
    });
  };
  define('toLocaleString', 'any', 'all');
  define('toLocaleDateString', 'date', 'date');
  define('toLocaleTimeString', 'time', 'time');
};
