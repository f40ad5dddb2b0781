// Intl.Collator, Intl.ListFormat, Intl.RelativeTimeFormat and Intl.Segmenter (ECMA-402
// chapters 10, 13, 17 and 18), and String.prototype.localeCompare through Intl.Collator.
(native, internal) => {
  'use strict';
  const I = internal.intl;
  const { natives, getOption } = I;

  const collators = I.slots('Collator');

  class Collator {
    constructor(locales = undefined, options = undefined) {
      const requested = I.canonicalizeLocaleList(locales);
      options = I.coerceOptions(options);
      const usage = getOption(options, 'usage', 'string', ['sort', 'search'], 'sort');
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const collation = I.checkType(getOption(options, 'collation', 'string'), 'collation');
      let numeric = getOption(options, 'numeric', 'boolean');
      if (numeric !== undefined) numeric = String(numeric);
      const caseFirst = getOption(options, 'caseFirst', 'string', ['upper', 'lower', 'false']);
      const resolved = I.resolveLocale(requested, ['co', 'kf', 'kn'], { kn: numeric, kf: caseFirst });
      void collation;
      const state = {
        locale: resolved.locale.replace(/-u-co-[a-z0-9-]+?(?=-[a-z0-9]{2}-|-[a-z0-9]{2}$|$)/, ''),
        usage,
        numeric: resolved.keywords.kn === 'true',
        caseFirst: resolved.keywords.kf ?? 'false',
        collation: 'default',
      };
      state.sensitivity = getOption(options, 'sensitivity', 'string',
        ['base', 'accent', 'case', 'variant'], 'variant');
      state.ignorePunctuation = getOption(options, 'ignorePunctuation', 'boolean', undefined, false);
      const keys = [];
      if (state.caseFirst !== 'false') keys.push(`kf-${state.caseFirst}`);
      if (state.numeric) keys.push('kn');
      state.dataLocale = resolved.base + (keys.length ? `-u-${keys.join('-')}` : '');
      collators.set(this, state);
    }

    get compare() {
      const state = collators.get(this, 'compare');
      if (state.bound === undefined) {
        state.bound = (a, b) =>
          natives.compare(state.dataLocale, state.sensitivity, state.ignorePunctuation, String(a), String(b));
      }
      return state.bound;
    }

    resolvedOptions() {
      const s = collators.get(this, 'resolvedOptions');
      return {
        locale: s.locale,
        usage: s.usage,
        sensitivity: s.sensitivity,
        ignorePunctuation: s.ignorePunctuation,
        collation: s.collation,
        numeric: s.numeric,
        caseFirst: s.caseFirst,
      };
    }
  }
  I.install('Collator', Collator);

  let defaultCollator;
  Object.defineProperty(String.prototype, 'localeCompare', {
    value: {
      localeCompare(that, locales = undefined, options = undefined) {
        if (this === undefined || this === null) {
          throw new TypeError('String.prototype.localeCompare called on null or undefined');
        }
        const s = String(this);
        const t = String(that);
        if (locales === undefined && options === undefined) {
          defaultCollator ??= new Collator();
          return defaultCollator.compare(s, t);
        }
        return new Collator(locales, options).compare(s, t);
      },
    }.localeCompare,
    writable: true,
    configurable: true,
  });

  const lists = I.slots('ListFormat');

  /** StringListFromIterable. */
  const stringList = (iterable) => {
    if (iterable === undefined) return [];
    const out = [];
    for (const item of iterable) {
      if (typeof item !== 'string') throw new TypeError('ListFormat takes strings only');
      out.push(item);
    }
    return out;
  };

  class ListFormat {
    constructor(locales = undefined, options = undefined) {
      if (new.target === undefined) throw new TypeError("Constructor Intl.ListFormat requires 'new'");
      const requested = I.canonicalizeLocaleList(locales);
      options = I.optionsObject(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const resolved = I.resolveLocale(requested, []);
      const type = getOption(options, 'type', 'string', ['conjunction', 'disjunction', 'unit'], 'conjunction');
      const style = getOption(options, 'style', 'string', ['long', 'short', 'narrow'], 'long');
      lists.set(this, { locale: resolved.locale, dataLocale: resolved.dataLocale, type, style });
    }

    format(list) {
      const s = lists.get(this, 'format');
      return I.joinParts(natives.formatList(s.dataLocale, s.type, s.style, stringList(list)));
    }

    formatToParts(list) {
      const s = lists.get(this, 'formatToParts');
      return I.partsToObjects(natives.formatList(s.dataLocale, s.type, s.style, stringList(list)));
    }

    resolvedOptions() {
      const s = lists.get(this, 'resolvedOptions');
      return { locale: s.locale, type: s.type, style: s.style };
    }
  }
  I.install('ListFormat', ListFormat);

  const relatives = I.slots('RelativeTimeFormat');
  const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];

  class RelativeTimeFormat {
    constructor(locales = undefined, options = undefined) {
      if (new.target === undefined) {
        throw new TypeError("Constructor Intl.RelativeTimeFormat requires 'new'");
      }
      const requested = I.canonicalizeLocaleList(locales);
      options = I.coerceOptions(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const nu = I.checkType(getOption(options, 'numberingSystem', 'string'), 'numberingSystem');
      const resolved = I.resolveLocale(requested, ['nu'], { nu });
      const style = getOption(options, 'style', 'string', ['long', 'short', 'narrow'], 'long');
      const numeric = getOption(options, 'numeric', 'string', ['always', 'auto'], 'always');
      const numberingSystem = resolved.keywords.nu ?? new Intl.NumberFormat(resolved.locale).resolvedOptions().numberingSystem;
      relatives.set(this, { locale: resolved.locale, dataLocale: resolved.dataLocale, style, numeric, numberingSystem });
    }

    format(value, unit) {
      return I.joinParts(relativeParts(relatives.get(this, 'format'), value, unit));
    }

    formatToParts(value, unit) {
      const parts = relativeParts(relatives.get(this, 'formatToParts'), value, unit);
      const singular = singularUnit(String(unit));
      return I.partsToObjects(parts, (p) => {
        if (p.type !== 'literal') p.unit = singular;
      });
    }

    resolvedOptions() {
      const s = relatives.get(this, 'resolvedOptions');
      return { locale: s.locale, style: s.style, numeric: s.numeric, numberingSystem: s.numberingSystem };
    }
  }

  const singularUnit = (unit) => {
    const singular = unit.endsWith('s') ? unit.slice(0, -1) : unit;
    if (!UNITS.includes(singular)) throw new RangeError(`Invalid unit argument: ${unit}`);
    return singular;
  };

  const relativeParts = (state, value, unit) => {
    const x = Number(value);
    const singular = singularUnit(String(unit));
    if (!Number.isFinite(x)) throw new RangeError('value must be finite');
    const text = Object.is(x, -0) ? '-0' : String(x).includes('e') ? x.toFixed(20).replace(/\.?0+$/, '') : String(x);
    return natives.formatRelative(state.dataLocale, state.style, state.numeric, text, singular);
  };
  I.install('RelativeTimeFormat', RelativeTimeFormat);

  const segmenters = I.slots('Segmenter');

  class Segmenter {
    constructor(locales = undefined, options = undefined) {
      if (new.target === undefined) throw new TypeError("Constructor Intl.Segmenter requires 'new'");
      const requested = I.canonicalizeLocaleList(locales);
      options = I.optionsObject(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const resolved = I.resolveLocale(requested, []);
      const granularity = getOption(options, 'granularity', 'string', ['grapheme', 'word', 'sentence'], 'grapheme');
      segmenters.set(this, { locale: resolved.locale, dataLocale: resolved.dataLocale, granularity });
    }

    segment(input) {
      const s = segmenters.get(this, 'segment');
      const text = String(input);
      const { breaks, wordLike } = natives.segment(s.dataLocale, s.granularity, text);
      return new Segments(text, breaks, s.granularity === 'word' ? wordLike : null);
    }

    resolvedOptions() {
      const s = segmenters.get(this, 'resolvedOptions');
      return { locale: s.locale, granularity: s.granularity };
    }
  }

  const segmentData = (text, breaks, wordLike, i) => {
    const data = { segment: text.slice(breaks[i], breaks[i + 1]), index: breaks[i], input: text };
    if (wordLike !== null) data.isWordLike = wordLike[i + 1];
    return data;
  };

  class Segments {
    #text;
    #breaks;
    #wordLike;
    constructor(text, breaks, wordLike) {
      this.#text = text;
      this.#breaks = breaks;
      this.#wordLike = wordLike;
    }

    containing(index) {
      let n = Math.trunc(Number(index)) || 0;
      if (n < 0 || n >= this.#text.length) return undefined;
      const breaks = this.#breaks;
      for (let i = 0; i + 1 < breaks.length; i++) {
        if (breaks[i] <= n && n < breaks[i + 1]) return segmentData(this.#text, breaks, this.#wordLike, i);
      }
      return undefined;
    }

    *[Symbol.iterator]() {
      const breaks = this.#breaks;
      for (let i = 0; i + 1 < breaks.length; i++) {
        yield segmentData(this.#text, breaks, this.#wordLike, i);
      }
    }
  }
  I.install('Segmenter', Segmenter);
};
