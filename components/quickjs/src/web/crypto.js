// `crypto` (W3C Web Cryptography): getRandomValues and randomUUID from wasi:random (on the
// run's tape, so a replay draws the same bytes), and crypto.subtle's digest (SHA-1, SHA-256,
// SHA-384, SHA-512) and HMAC (generateKey, importKey and exportKey as "raw" or "jwk", sign,
// verify). Other algorithms reject with NotSupportedError.
(function (native, internal) {
  "use strict";

  const { DOMException, toBytes } = internal;
  const MAX_RANDOM_BYTES = 65536;
  const HASHES = { "SHA-1": 64, "SHA-256": 64, "SHA-384": 128, "SHA-512": 128 };
  const INTEGER_ARRAYS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

  function getRandomValues(array) {
    if (!INTEGER_ARRAYS.some((T) => array instanceof T)) {
      throw new DOMException("getRandomValues: the argument must be an integer TypedArray", "TypeMismatchError");
    }
    if (array.byteLength > MAX_RANDOM_BYTES) {
      throw new DOMException(`getRandomValues: ${array.byteLength} bytes is over the quota of ${MAX_RANDOM_BYTES}`, "QuotaExceededError");
    }
    toBytes(array).set(native.randomBytes(array.byteLength));
    return array;
  }

  function randomUUID() {
    const b = native.randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  const notSupported = (what) => new DOMException(`${what} is not supported`, "NotSupportedError");

  /** An algorithm identifier, as a dictionary with a canonical `name`. */
  const normalize = (algorithm) => {
    const dict = typeof algorithm === "string" ? { name: algorithm } : algorithm;
    if (dict === null || typeof dict !== "object" || dict.name === undefined) {
      throw new TypeError("the algorithm must be a string or an object with a name");
    }
    const name = String(dict.name).toUpperCase();
    const canonical = name in HASHES ? name : name === "HMAC" ? "HMAC" : null;
    if (canonical === null) throw notSupported(`The algorithm '${dict.name}'`);
    return { ...dict, name: canonical };
  };
  const hashOf = (hash) => {
    if (hash === undefined) throw new TypeError("HMAC needs a hash");
    const { name } = normalize(hash);
    if (!(name in HASHES)) throw notSupported(`HMAC with the hash '${name}'`);
    return name;
  };

  const ILLEGAL = Symbol("illegal constructor");
  const secrets = new WeakMap();

  class CryptoKey {
    #algorithm;
    #extractable;
    #usages;
    constructor(key, algorithm, extractable, usages, secret) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
      this.#algorithm = Object.freeze(algorithm);
      this.#extractable = extractable;
      this.#usages = Object.freeze([...usages]);
      secrets.set(this, secret);
    }
    get type() { return "secret"; }
    get extractable() { return this.#extractable; }
    get algorithm() { return this.#algorithm; }
    get usages() { return this.#usages; }
  }
  internal.tag(CryptoKey, "CryptoKey");

  const HMAC_USAGES = ["sign", "verify"];
  const hmacKey = (algorithm, secret, extractable, usages) => {
    const hash = hashOf(algorithm.hash);
    if (secret.length === 0) throw new DOMException("an HMAC key cannot be empty", "DataError");
    for (const usage of usages) {
      if (!HMAC_USAGES.includes(usage)) throw new DOMException(`an HMAC key cannot be used to ${usage}`, "SyntaxError");
    }
    if (usages.length === 0) throw new DOMException("the key has no usages", "SyntaxError");
    const length = secret.length * 8;
    return new CryptoKey(ILLEGAL, { name: "HMAC", hash: { name: hash }, length }, Boolean(extractable), usages, secret);
  };
  const useKey = (key, usage) => {
    if (!(key instanceof CryptoKey)) throw new TypeError("the key must be a CryptoKey");
    if (!key.usages.includes(usage)) throw new DOMException(`the key cannot be used to ${usage}`, "InvalidAccessError");
    return secrets.get(key);
  };
  const base64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const fromBase64url = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const JWK_ALG = { "SHA-1": "HS1", "SHA-256": "HS256", "SHA-384": "HS384", "SHA-512": "HS512" };

  // Each method runs its steps as a promise, so that any failure is a rejection.
  const run = (steps) => new Promise((resolve) => resolve(steps()));

  const subtle = {
    digest(algorithm, data) {
      return run(() => {
        const { name } = normalize(algorithm);
        if (!(name in HASHES)) throw notSupported(`digest with '${name}'`);
        return native.digest(name, internal.copyBytes(data, "digest: the data")).buffer;
      });
    },
    importKey(format, keyData, algorithm, extractable, usages) {
      return run(() => {
        const alg = normalize(algorithm);
        if (alg.name !== "HMAC") throw notSupported(`importKey for '${alg.name}'`);
        let secret;
        if (format === "raw") secret = internal.copyBytes(keyData, "importKey: the key data");
        else if (format === "jwk") {
          if (keyData?.kty !== "oct" || typeof keyData.k !== "string") throw new DOMException("not an oct JWK", "DataError");
          secret = fromBase64url(keyData.k);
        } else throw notSupported(`the key format '${format}'`);
        return hmacKey(alg, secret, extractable, [...usages]);
      });
    },
    exportKey(format, key) {
      return run(() => {
        if (!(key instanceof CryptoKey)) throw new TypeError("the key must be a CryptoKey");
        if (!key.extractable) throw new DOMException("the key is not extractable", "InvalidAccessError");
        const secret = secrets.get(key);
        if (format === "raw") return secret.slice().buffer;
        if (format === "jwk") {
          return { kty: "oct", k: base64url(secret), alg: JWK_ALG[key.algorithm.hash.name], key_ops: [...key.usages], ext: true };
        }
        throw notSupported(`the key format '${format}'`);
      });
    },
    generateKey(algorithm, extractable, usages) {
      return run(() => {
        const alg = normalize(algorithm);
        if (alg.name !== "HMAC") throw notSupported(`generateKey for '${alg.name}'`);
        const bits = alg.length === undefined ? HASHES[hashOf(alg.hash)] * 8 : Number(alg.length);
        if (!(bits > 0 && bits % 8 === 0)) throw new DOMException("the key length must be a positive multiple of 8", "OperationError");
        return hmacKey(alg, native.randomBytes(bits / 8), extractable, [...usages]);
      });
    },
    sign(algorithm, key, data) {
      return run(() => {
        if (normalize(algorithm).name !== "HMAC") throw notSupported("sign with this algorithm");
        const secret = useKey(key, "sign");
        return native.hmac(key.algorithm.hash.name, secret, internal.copyBytes(data, "sign: the data")).buffer;
      });
    },
    verify(algorithm, key, signature, data) {
      return run(() => {
        if (normalize(algorithm).name !== "HMAC") throw notSupported("verify with this algorithm");
        const secret = useKey(key, "verify");
        const expected = native.hmac(key.algorithm.hash.name, secret, internal.copyBytes(data, "verify: the data"));
        const given = toBytes(signature, "verify: the signature");
        // Compared in full, whatever differs first.
        let difference = expected.length ^ given.length;
        for (let i = 0; i < expected.length; i++) difference |= expected[i] ^ (given[i] ?? 0);
        return difference === 0;
      });
    },
  };
  for (const name of ["encrypt", "decrypt", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"]) {
    subtle[name] = () => Promise.reject(notSupported(`crypto.subtle.${name}`));
  }

  class SubtleCrypto {
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
  }
  for (const [name, method] of Object.entries(subtle)) {
    Object.defineProperty(SubtleCrypto.prototype, name, { value: method, writable: true, configurable: true });
  }
  internal.tag(SubtleCrypto, "SubtleCrypto");
  class Crypto {
    #subtle = new SubtleCrypto(ILLEGAL);
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
    }
    get subtle() { return this.#subtle; }
    getRandomValues(array) { return getRandomValues(array); }
    randomUUID() { return randomUUID(); }
  }
  internal.tag(Crypto, "Crypto");

  internal.define("crypto", new Crypto(ILLEGAL));
  internal.define("Crypto", Crypto);
  internal.define("CryptoKey", CryptoKey);
  internal.define("SubtleCrypto", SubtleCrypto);
})
