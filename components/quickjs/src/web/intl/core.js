// Intl's shared machinery (ECMA-402 chapter 9): locale lists, locale resolution, option
// reading, and the `Intl` object. The constructors are in number.js, datetime.js and text.js;
// they reach this file's helpers through `internal.intl`.
(native, internal) => {
  'use strict';
  const natives = native.intl;
  const { defineProperty, create, freeze } = Object;
  const isArray = Array.isArray;

  /** The unicode extension of a tag (`-u-...`), split off. */
  const splitExtension = (tag) => {
    const match = /-u(?:-[a-z0-9]{2,8})+/.exec(tag);
    if (match === null) return { base: tag, keywords: create(null) };
    const base = tag.slice(0, match.index) + tag.slice(match.index + match[0].length);
    const keywords = create(null);
    let key = null;
    for (const subtag of match[0].slice(3).split('-')) {
      if (subtag.length === 2) {
        key = subtag;
        if (!(key in keywords)) keywords[key] = '';
      } else if (key !== null && keywords[key] === '') {
        keywords[key] = subtag;
      } else if (key !== null) {
        keywords[key] += '-' + subtag;
      }
    }
    return { base, keywords };
  };

  /** CanonicalizeLocaleList: the request's tags, canonical and without duplicates. */
  const canonicalizeLocaleList = (locales) => {
    if (locales === undefined) return [];
    const seen = [];
    const list =
      typeof locales === 'string' || (locales !== null && internal.intl.isLocale(locales))
        ? [locales]
        : Object(locales);
    if (locales === null) throw new TypeError('locales must not be null');
    const length = Math.min(Math.max(Math.trunc(Number(list.length)) || 0, 0), 2 ** 53 - 1);
    for (let k = 0; k < length; k++) {
      if (!(k in list)) continue;
      const value = list[k];
      if (typeof value !== 'string' && (typeof value !== 'object' || value === null)) {
        throw new TypeError('a locale must be a string or an Intl.Locale');
      }
      const tag = internal.intl.isLocale(value) ? value.toString() : String(value);
      if (!/^[A-Za-z0-9-]+$/.test(tag) || /^x-|--|-$|^-/.test(tag)) {
        throw new RangeError(`Incorrect locale information provided: ${tag}`);
      }
      const canonical = natives.canonicalize(tag);
      if (!seen.includes(canonical)) seen.push(canonical);
    }
    return seen;
  };

  /** Whether a locale has data here: its language is one of those baked in. */
  const available = (tag) => natives.hasData(splitExtension(tag).base);

  /** The first requested locale with data (or the default), with the relevant keywords the
   * request carries and `overrides` (from options) applied. */
  const resolveLocale = (requested, relevantKeys, overrides = {}) => {
    let found = null;
    for (const tag of requested) {
      if (available(tag)) {
        found = tag;
        break;
      }
    }
    const { base, keywords } = splitExtension(found ?? natives.defaultLocale);
    const chosen = create(null);
    const shown = [];
    for (const key of relevantKeys) {
      let value = key in keywords ? keywords[key] || 'true' : undefined;
      const fromTag = value;
      const override = overrides[key];
      if (override !== undefined) value = override;
      if (value !== undefined) chosen[key] = value;
      if (fromTag !== undefined && fromTag === value) shown.push(key);
    }
    const extension = (keys) =>
      keys.length === 0
        ? ''
        : '-u-' + keys.map((k) => (chosen[k] === 'true' ? k : `${k}-${chosen[k]}`)).join('-');
    const dataKeys = relevantKeys.filter((k) => chosen[k] !== undefined);
    return {
      locale: base + extension(shown),
      dataLocale: base + extension(dataKeys),
      base,
      keywords: chosen,
    };
  };

  /** GetOption. */
  const getOption = (options, name, type, values, fallback) => {
    let value = options[name];
    if (value === undefined) return fallback;
    if (type === 'boolean') value = Boolean(value);
    else if (type === 'number') {
      value = Number(value);
      if (Number.isNaN(value)) throw new RangeError(`${name} is not a number`);
    } else value = String(value);
    if (values !== undefined && !values.includes(value)) {
      throw new RangeError(`Value ${value} out of range for option ${name}`);
    }
    return value;
  };

  /** DefaultNumberOption and GetNumberOption. */
  const defaultNumberOption = (value, minimum, maximum, fallback) => {
    if (value === undefined) return fallback;
    value = Number(value);
    if (Number.isNaN(value) || value < minimum || value > maximum) {
      throw new RangeError(`value ${value} out of range [${minimum}, ${maximum}]`);
    }
    return Math.floor(value);
  };
  const getNumberOption = (options, name, minimum, maximum, fallback) =>
    defaultNumberOption(options[name], minimum, maximum, fallback);

  /** GetOptionsObject / CoerceOptionsToObject. */
  const optionsObject = (options) => {
    if (options === undefined) return create(null);
    if (typeof options === 'object' && options !== null) return options;
    throw new TypeError('options must be an object');
  };
  const coerceOptions = (options) => (options === undefined ? create(null) : Object(options));

  /** A numbering system or calendar keyword as UTS #35 spells one. */
  const checkType = (value, name) => {
    if (value !== undefined && !/^[a-z0-9]{3,8}(-[a-z0-9]{3,8})*$/i.test(value)) {
      throw new RangeError(`Invalid ${name}: ${value}`);
    }
    return value?.toLowerCase();
  };

  /** SupportedLocales. */
  const supportedLocales = (locales, options) => {
    const requested = canonicalizeLocaleList(locales);
    options = coerceOptions(options);
    getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
    return requested.filter(available);
  };

  /** Installs `constructor` as `Intl[name]`, with ECMA-402's attributes and
   * `supportedLocalesOf`. */
  const install = (name, constructor) => {
    defineProperty(constructor, 'supportedLocalesOf', {
      value: {
        supportedLocalesOf(locales, options = undefined) {
          return supportedLocales(locales, options);
        },
      }.supportedLocalesOf,
      writable: true,
      configurable: true,
    });
    defineProperty(constructor.prototype, Symbol.toStringTag, {
      value: `Intl.${name}`,
      configurable: true,
    });
    defineProperty(Intl, name, { value: constructor, writable: true, configurable: true });
  };

  /** The internal slots of Intl objects, by object: a brand check and their state. */
  const slots = (kind) => {
    const map = new WeakMap();
    return {
      set: (object, state) => map.set(object, state),
      get: (object, method) => {
        const state = typeof object === 'object' && object !== null ? map.get(object) : undefined;
        if (state === undefined) {
          throw new TypeError(`${method} called on an object that is not an Intl.${kind}`);
        }
        return state;
      },
    };
  };

  /** `[type, value]` pairs as ECMA-402's `{ type, value }` records. */
  const partsToObjects = (pairs, extra) => {
    const out = [];
    for (const [type, value] of pairs) {
      const part = { type, value };
      if (extra !== undefined) extra(part);
      out.push(part);
    }
    return out;
  };
  const joinParts = (pairs) => {
    let text = '';
    for (const pair of pairs) text += pair[1];
    return text;
  };

  const Intl = {};
  defineProperty(Intl, Symbol.toStringTag, { value: 'Intl', configurable: true });
  defineProperty(Intl, 'getCanonicalLocales', {
    value: {
      getCanonicalLocales(locales) {
        return canonicalizeLocaleList(locales);
      },
    }.getCanonicalLocales,
    writable: true,
    configurable: true,
  });
  defineProperty(globalThis, 'Intl', { value: Intl, writable: true, configurable: true });

  internal.intl = {
    natives,
    splitExtension,
    canonicalizeLocaleList,
    resolveLocale,
    getOption,
    getNumberOption,
    defaultNumberOption,
    optionsObject,
    coerceOptions,
    checkType,
    install,
    slots,
    partsToObjects,
    joinParts,
    isLocale: () => false,
    isArray,
    freeze,
  };
};
