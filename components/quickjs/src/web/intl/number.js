// Intl.NumberFormat and Intl.PluralRules (ECMA-402 chapters 16 and 17), and
// Number.prototype.toLocaleString and BigInt.prototype.toLocaleString through them.
(native, internal) => {
  'use strict';
  const I = internal.intl;
  const { natives, getOption, getNumberOption, defaultNumberOption } = I;

  // ISO 4217's minor units where they are not 2.
  const CURRENCY_DIGITS = {
    BHD: 3, BIF: 0, CLF: 4, CLP: 0, DJF: 0, GNF: 0, IQD: 3, ISK: 0, JOD: 3, JPY: 0, KMF: 0,
    KRW: 0, KWD: 3, LYD: 3, OMR: 3, PYG: 0, RWF: 0, TND: 3, UGX: 0, UYI: 0, UYW: 4, VND: 0,
    VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  };
  const SANCTIONED_UNITS = (
    'acre bit byte celsius centimeter day degree fahrenheit fluid-ounce foot gallon gigabit ' +
    'gigabyte gram hectare hour inch kilobit kilobyte kilogram kilometer liter megabit ' +
    'megabyte meter microsecond mile mile-scandinavian milliliter millimeter millisecond ' +
    'minute month nanosecond ounce percent petabyte pound second stone terabit terabyte week ' +
    'yard year'
  ).split(' ');
  const wellFormedUnit = (unit) => {
    if (SANCTIONED_UNITS.includes(unit)) return true;
    const per = unit.indexOf('-per-');
    return (
      per > 0 &&
      SANCTIONED_UNITS.includes(unit.slice(0, per)) &&
      SANCTIONED_UNITS.includes(unit.slice(per + 5))
    );
  };

  /** A number as an exact decimal string, as the natives read it. */
  const decimalString = (x) => {
    if (typeof x === 'bigint') return String(x);
    if (Number.isNaN(x)) return 'NaN';
    if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
    if (Object.is(x, -0)) return '-0';
    const text = String(x);
    const e = text.indexOf('e');
    if (e < 0) return text;
    const negative = text[0] === '-';
    const mantissa = text.slice(negative ? 1 : 0, e).replace('.', '');
    const pointAt = (text.slice(negative ? 1 : 0, e).indexOf('.') + 1 || e + 1 - (negative ? 1 : 0)) - 1;
    const exponent = Number(text.slice(e + 1)) + pointAt;
    let digits;
    if (exponent >= mantissa.length) digits = mantissa + '0'.repeat(exponent - mantissa.length);
    else if (exponent <= 0) digits = '0.' + '0'.repeat(-exponent) + mantissa;
    else digits = mantissa.slice(0, exponent) + '.' + mantissa.slice(exponent);
    return (negative ? '-' : '') + digits;
  };

  /** ToIntlMathematicalValue: numbers, bigints, and strings read exactly. */
  const mathematicalValue = (value) => {
    let primitive = value;
    if (typeof value === 'object' && value !== null) primitive = value.valueOf();
    if (typeof primitive === 'bigint') return String(primitive);
    if (typeof primitive === 'string') {
      const trimmed = primitive.trim();
      if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) && !/[eE]/.test(trimmed)) {
        let text = trimmed.replace(/^\+/, '');
        if (text.startsWith('.')) text = '0' + text;
        if (text.startsWith('-.')) text = '-0' + text.slice(1);
        if (text.endsWith('.')) text = text.slice(0, -1);
        return text;
      }
    }
    return decimalString(Number(primitive));
  };

  /** SetNumberFormatDigitOptions. */
  const digitOptions = (state, options, mnfdDefault, mxfdDefault, notation) => {
    const mnid = getNumberOption(options, 'minimumIntegerDigits', 1, 21, 1);
    const mnfd = options.minimumFractionDigits;
    const mxfd = options.maximumFractionDigits;
    const mnsd = options.minimumSignificantDigits;
    const mxsd = options.maximumSignificantDigits;
    state.minimumIntegerDigits = mnid;
    const increment = getNumberOption(options, 'roundingIncrement', 1, 5000, 1);
    if (![1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000].includes(increment)) {
      throw new RangeError(`roundingIncrement ${increment} is not allowed`);
    }
    const roundingMode = getOption(options, 'roundingMode', 'string', [
      'ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc',
      'halfEven',
    ], 'halfExpand');
    const priority = getOption(options, 'roundingPriority', 'string',
      ['auto', 'morePrecision', 'lessPrecision'], 'auto');
    const trailing = getOption(options, 'trailingZeroDisplay', 'string',
      ['auto', 'stripIfInteger'], 'auto');
    if (increment !== 1) mxfdDefault = mnfdDefault;
    state.roundingIncrement = increment;
    state.roundingMode = roundingMode;
    state.roundingPriority = priority;
    state.trailingZeroDisplay = trailing;
    const hasSd = mnsd !== undefined || mxsd !== undefined;
    const hasFd = mnfd !== undefined || mxfd !== undefined;
    let needSd = true;
    let needFd = true;
    if (priority === 'auto') {
      needSd = hasSd;
      if (needSd || (!hasFd && notation === 'compact')) needFd = false;
    }
    if (needSd) {
      if (hasSd) {
        state.minimumSignificantDigits = defaultNumberOption(mnsd, 1, 21, 1);
        state.maximumSignificantDigits = defaultNumberOption(mxsd, state.minimumSignificantDigits, 21, 21);
      } else {
        state.minimumSignificantDigits = 1;
        state.maximumSignificantDigits = 21;
      }
    }
    if (needFd) {
      if (hasFd) {
        let min = defaultNumberOption(mnfd, 0, 100, undefined);
        let max = defaultNumberOption(mxfd, 0, 100, undefined);
        if (min === undefined) min = Math.min(mnfdDefault, max);
        else if (max === undefined) max = Math.max(mxfdDefault, min);
        else if (min > max) throw new RangeError('minimumFractionDigits is above maximumFractionDigits');
        state.minimumFractionDigits = min;
        state.maximumFractionDigits = max;
      } else {
        state.minimumFractionDigits = mnfdDefault;
        state.maximumFractionDigits = mxfdDefault;
      }
    }
    if (!needSd && !needFd) {
      state.minimumFractionDigits = 0;
      state.maximumFractionDigits = 0;
      state.minimumSignificantDigits = 1;
      state.maximumSignificantDigits = 2;
      state.roundingType = 'morePrecision';
      state.compactRounding = true;
    } else if (priority === 'auto') {
      state.roundingType = needSd ? 'significantDigits' : 'fractionDigits';
    } else {
      state.roundingType = priority;
    }
  };

  /** The options the natives read, from a formatter's state. */
  const nativeOptions = (state) => {
    const out = {
      style: state.style,
      currency: state.currency,
      currencyDisplay: state.currencyDisplay,
      unit: state.unit,
      unitDisplay: state.unitDisplay,
      notation: state.compactRounding ? 'compact' : state.notation,
      compactDisplay: state.compactDisplay,
      useGrouping: String(state.useGrouping),
      signDisplay: state.signDisplay,
      roundingMode: state.roundingMode,
      minimumIntegerDigits: state.minimumIntegerDigits,
      trailingZeroDisplay: state.trailingZeroDisplay,
      type: state.type,
    };
    if (state.roundingType === 'significantDigits' || state.roundingType === 'lessPrecision') {
      out.minimumSignificantDigits = state.minimumSignificantDigits;
      out.maximumSignificantDigits = state.maximumSignificantDigits;
    } else {
      out.minimumFractionDigits = state.minimumFractionDigits;
      out.maximumFractionDigits = state.maximumFractionDigits;
    }
    return out;
  };

  const formatters = I.slots('NumberFormat');

  class NumberFormat {
    constructor(locales = undefined, options = undefined) {
      const requested = I.canonicalizeLocaleList(locales);
      options = I.coerceOptions(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const nu = I.checkType(getOption(options, 'numberingSystem', 'string'), 'numberingSystem');
      const resolved = I.resolveLocale(requested, ['nu'], { nu });
      const state = { locale: resolved.locale, dataLocale: resolved.dataLocale };
      state.style = getOption(options, 'style', 'string', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
      let currency = getOption(options, 'currency', 'string');
      if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency)) {
        throw new RangeError(`Invalid currency code: ${currency}`);
      }
      const currencyDisplay = getOption(options, 'currencyDisplay', 'string',
        ['code', 'symbol', 'narrowSymbol', 'name'], 'symbol');
      const currencySign = getOption(options, 'currencySign', 'string', ['standard', 'accounting'], 'standard');
      const unit = getOption(options, 'unit', 'string');
      if (unit !== undefined && !wellFormedUnit(unit)) throw new RangeError(`Invalid unit: ${unit}`);
      const unitDisplay = getOption(options, 'unitDisplay', 'string', ['short', 'narrow', 'long'], 'short');
      if (state.style === 'currency') {
        if (currency === undefined) throw new TypeError('Currency code is required with currency style.');
        currency = currency.toUpperCase();
        state.currency = currency;
        state.currencyDisplay = currencyDisplay;
        state.currencySign = currencySign;
      }
      if (state.style === 'unit') {
        if (unit === undefined) throw new TypeError('Unit is required with unit style.');
        state.unit = unit;
        state.unitDisplay = unitDisplay;
      }
      state.notation = getOption(options, 'notation', 'string',
        ['standard', 'scientific', 'engineering', 'compact'], 'standard');
      let mnfdDefault = 0;
      let mxfdDefault = state.style === 'percent' ? 0 : 3;
      if (state.style === 'currency' && state.notation === 'standard') {
        mnfdDefault = mxfdDefault = CURRENCY_DIGITS[currency] ?? 2;
      }
      digitOptions(state, options, mnfdDefault, mxfdDefault, state.notation);
      const compactDisplay = getOption(options, 'compactDisplay', 'string', ['short', 'long'], 'short');
      if (state.notation === 'compact') state.compactDisplay = compactDisplay;
      const defaultGrouping = state.notation === 'compact' ? 'min2' : 'auto';
      let grouping = options.useGrouping;
      if (grouping === undefined) grouping = defaultGrouping;
      else if (grouping === true) grouping = 'always';
      else if (grouping === false || grouping === null || grouping === 0 || grouping === '') grouping = false;
      else {
        grouping = String(grouping);
        if (grouping === 'true' || grouping === 'false') grouping = defaultGrouping;
        else if (!['min2', 'auto', 'always'].includes(grouping)) {
          throw new RangeError(`Value ${grouping} out of range for option useGrouping`);
        }
      }
      state.useGrouping = grouping;
      state.signDisplay = getOption(options, 'signDisplay', 'string',
        ['auto', 'never', 'always', 'exceptZero', 'negative'], 'auto');
      state.numberingSystem = nu ?? defaultNumberingSystem(state.dataLocale);
      formatters.set(this, state);
    }

    get format() {
      const state = formatters.get(this, 'format');
      if (state.bound === undefined) {
        state.bound = (value) => I.joinParts(formatParts(state, value));
      }
      return state.bound;
    }

    formatToParts(value) {
      return I.partsToObjects(formatParts(formatters.get(this, 'formatToParts'), value));
    }

    formatRange(start, end) {
      const state = formatters.get(this, 'formatRange');
      if (start === undefined || end === undefined) throw new TypeError('start and end are required');
      const a = I.joinParts(formatParts(state, start));
      const b = I.joinParts(formatParts(state, end));
      return a === b ? `~${a}` : `${a}–${b}`;
    }

    resolvedOptions() {
      const s = formatters.get(this, 'resolvedOptions');
      const out = { locale: s.locale, numberingSystem: s.numberingSystem, style: s.style };
      const copy = (name) => {
        if (s[name] !== undefined) out[name] = s[name];
      };
      ['currency', 'currencyDisplay', 'currencySign', 'unit', 'unitDisplay',
        'minimumIntegerDigits', 'minimumFractionDigits', 'maximumFractionDigits',
        'minimumSignificantDigits', 'maximumSignificantDigits'].forEach(copy);
      out.useGrouping = s.useGrouping;
      out.notation = s.notation;
      copy('compactDisplay');
      out.signDisplay = s.signDisplay;
      out.roundingIncrement = s.roundingIncrement;
      out.roundingMode = s.roundingMode;
      out.roundingPriority = s.roundingPriority;
      out.trailingZeroDisplay = s.trailingZeroDisplay;
      return out;
    }
  }

  const defaultNumberingSystem = (dataLocale) => {
    const zero = natives.formatNumber(dataLocale, { useGrouping: 'false' }, '0')[0][1];
    return { '٠': 'arab', '۰': 'arabext', '০': 'beng', '०': 'deva' }[zero] ?? 'latn';
  };

  const formatParts = (state, value) =>
    natives.formatNumber(state.dataLocale, nativeOptions(state), mathematicalValue(value));

  I.install('NumberFormat', NumberFormat);

  const plurals = I.slots('PluralRules');

  class PluralRules {
    constructor(locales = undefined, options = undefined) {
      if (new.target === undefined) throw new TypeError("Constructor Intl.PluralRules requires 'new'");
      const requested = I.canonicalizeLocaleList(locales);
      options = I.coerceOptions(options);
      getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
      const resolved = I.resolveLocale(requested, []);
      const state = { locale: resolved.locale, dataLocale: resolved.dataLocale };
      state.type = getOption(options, 'type', 'string', ['cardinal', 'ordinal'], 'cardinal');
      digitOptions(state, options, 0, 3, 'standard');
      plurals.set(this, state);
    }

    select(value) {
      const state = plurals.get(this, 'select');
      return natives.selectPlural(state.dataLocale, nativeOptions(state), decimalString(Number(value)));
    }

    selectRange(start, end) {
      const state = plurals.get(this, 'selectRange');
      if (start === undefined || end === undefined) throw new TypeError('start and end are required');
      const x = Number(start);
      const y = Number(end);
      if (Number.isNaN(x) || Number.isNaN(y)) throw new RangeError('start and end must be numbers');
      return natives.selectPlural(state.dataLocale, nativeOptions(state), decimalString(y));
    }

    resolvedOptions() {
      const s = plurals.get(this, 'resolvedOptions');
      const out = { locale: s.locale, type: s.type, minimumIntegerDigits: s.minimumIntegerDigits };
      for (const name of ['minimumFractionDigits', 'maximumFractionDigits',
        'minimumSignificantDigits', 'maximumSignificantDigits']) {
        if (s[name] !== undefined) out[name] = s[name];
      }
      const order = ['zero', 'one', 'two', 'few', 'many', 'other'];
      out.pluralCategories = natives
        .pluralCategories(s.dataLocale, s.type)
        .sort((a, b) => order.indexOf(a) - order.indexOf(b));
      out.roundingIncrement = s.roundingIncrement;
      out.roundingMode = s.roundingMode;
      out.roundingPriority = s.roundingPriority;
      out.trailingZeroDisplay = s.trailingZeroDisplay;
      return out;
    }
  }
  I.install('PluralRules', PluralRules);

  let defaultFormat;
  const localeString = (value, locales, options) => {
    if (locales === undefined && options === undefined) {
      defaultFormat ??= new NumberFormat();
      return defaultFormat.format(value);
    }
    return new NumberFormat(locales, options).format(value);
  };
  Object.defineProperty(Number.prototype, 'toLocaleString', {
    value: {
      toLocaleString(locales = undefined, options = undefined) {
        const value = typeof this === 'object' && this !== null ? this.valueOf() : this;
        if (typeof value !== 'number') throw new TypeError('not a number');
        return localeString(value, locales, options);
      },
    }.toLocaleString,
    writable: true,
    configurable: true,
  });
  Object.defineProperty(BigInt.prototype, 'toLocaleString', {
    value: {
      toLocaleString(locales = undefined, options = undefined) {
        const value = typeof this === 'object' && this !== null ? this.valueOf() : this;
        if (typeof value !== 'bigint') throw new TypeError('not a BigInt');
        return localeString(value, locales, options);
      },
    }.toLocaleString,
    writable: true,
    configurable: true,
  });
};
