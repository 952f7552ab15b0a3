// The phone's key and what it signs.
//
// The key pair is made here with WebCrypto as NON-EXTRACTABLE (the private key can sign
// but can never be read out, not even by this page) and kept in IndexedDB, which stores
// the CryptoKey object itself. Payloads are JSON arrays signed exactly as sent; see
// docs/AWAY-PROTOCOL.md for the formats.

const DB_NAME = "qoder-away";
const STORE = "phone";
const RECORD = "this-phone";
const ECDSA = { name: "ECDSA", namedCurve: "P-256" };
const SIGN = { name: "ECDSA", hash: "SHA-256" };

function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function inStore(mode, action) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = action(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

/** This phone's record ({privateKey, spki, name, pairingId, deviceId, code}) or null. */
export async function loadPhone() {
  return (await inStore("readonly", (store) => store.get(RECORD))) ?? null;
}

/** Keep this phone's record (the CryptoKey is stored as it is, still non-extractable). */
export async function savePhone(record) {
  await inStore("readwrite", (store) => store.put(record, RECORD));
}

/** Forget this phone's key for good (revoked, refused, or paired anew). */
export async function forgetPhone() {
  await inStore("readwrite", (store) => store.delete(RECORD));
}

/** A new non-extractable P-256 key: {privateKey, spki (Uint8Array, SPKI DER)}. */
export async function makeKey() {
  const pair = await crypto.subtle.generateKey(ECDSA, false, ["sign"]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  return { privateKey: pair.privateKey, spki };
}

/** base64url without padding (RFC 4648 §5). */
export function b64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const utf8 = (text) => new TextEncoder().encode(text);

/** `payload` (a string) signed with `privateKey`: the signature as base64url (P1363 r||s). */
export async function signText(privateKey, payload) {
  const signature = await crypto.subtle.sign(SIGN, privateKey, utf8(payload));
  return b64url(new Uint8Array(signature));
}

/** A signed thing as the desk reads it: {payload, signature}. */
export async function signed(privateKey, items) {
  const payload = JSON.stringify(items);
  return { payload, signature: await signText(privateKey, payload) };
}

/**
 * The short code both screens show: SHA-256 over the pairing token and this phone's
 * public key, its first 8 bytes as a number mod 10^8, as "0123 4567". Computed here, so
 * a key or token swapped on the way gives the desk another code than this phone shows.
 */
export async function pairingCode(token, spki) {
  const parts = [utf8("qoder-desktop pairing v1\0"), utf8(token), new Uint8Array([0]), spki];
  const message = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", message));
  let number = 0n;
  for (const byte of digest.slice(0, 8)) number = (number << 8n) | BigInt(byte);
  const digits = (number % 100000000n).toString().padStart(8, "0");
  return `${digits.slice(0, 4)} ${digits.slice(4)}`;
}

/** A name for this phone the desk lists it by ("Pixel 7", "iPhone"), at most 40 characters. */
export function phoneName(userAgent) {
  const android = /Android [^;)]*;\s*([^;)]+?)(?:\s+Build\/[^;)]*)?[;)]/.exec(userAgent);
  if (android && android[1].trim() && android[1].trim() !== "K") {
    return android[1].trim().slice(0, 40);
  }
  for (const device of ["iPhone", "iPad", "iPod"]) {
    if (userAgent.includes(device)) return device;
  }
  return /Android/.test(userAgent) ? "Android phone" : "Phone";
}
