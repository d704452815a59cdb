/**
 * proto3 JSON (protobuf.dev, "JSON Mapping") both ways, over the SDK's reflection types, plus the
 * payload "shorthand" of Temporal's HTTP API (README "HTTP API"):
 *
 * - field names in lowerCamelCase (the .proto spelling is also read), default-valued fields left
 *   out unless the field has explicit presence (oneof members, proto3 `optional`);
 * - 64-bit integers as decimal strings, enums by name, bytes as base64;
 * - well-known types: Timestamp as RFC 3339, Duration as "1.5s", FieldMask as one string,
 *   wrappers as their value, Struct/Value/ListValue as plain JSON, Any with "@type";
 * - Payload/Payloads: with shorthand on (the gateway's default), a payload the server can show as
 *   JSON is its JSON value (`json/plain`), its object with `_protoMessageType` (`json/protobuf`)
 *   or null (`binary/null`); Payloads become an array when every payload can. Anything else
 *   keeps the long form {metadata: {k: base64}, data: base64}.
 *
 * `toJson` reads messages as protobufjs decodes them (own properties are the fields on the
 * wire); `fromJson` builds plain objects for `Type.fromObject`.
 */
import { Long } from '../proto';
import { camelCase, fieldType, isEnum, isType, lookupType, type RField, type RType, type REnum } from './reflect';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A request the gateway cannot turn into the request message: INVALID_ARGUMENT (HTTP 400). */
export class JsonError extends Error {}

export interface JsonOptions {
  /** Payload shorthand (README "HTTP API"); the gateway turns it off for `?noPayloadShorthand`. */
  shorthand: boolean;
}

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED_LONG = new Set(['uint64', 'fixed64']);
const INT32_TYPES = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32_TYPES = new Set(['uint32', 'fixed32']);
const FLOAT_TYPES = new Set(['double', 'float']);

const PAYLOAD = '.temporal.api.common.v1.Payload';
const PAYLOADS = '.temporal.api.common.v1.Payloads';
const WRAPPERS = new Set(
  [
    'DoubleValue',
    'FloatValue',
    'Int64Value',
    'UInt64Value',
    'Int32Value',
    'UInt32Value',
    'BoolValue',
    'StringValue',
    'BytesValue',
  ].map((n) => `.google.protobuf.${n}`),
);

type Msg = Record<string, unknown>;

function own(msg: Msg, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(msg, key) && msg[key] !== null && msg[key] !== undefined;
}

// ------------------------------------------------------------------------------------ output

/** `msg` (a decoded message of `type`) as proto3 JSON. */
export function toJson(type: RType, msg: object, opts: JsonOptions): Json {
  const m = msg as Msg;
  switch (type.fullName) {
    case '.google.protobuf.Timestamp':
      return timestampJson(m);
    case '.google.protobuf.Duration':
      return durationJson(m);
    case '.google.protobuf.FieldMask':
      return ((m.paths as string[] | undefined) ?? []).map(camelCase).join(',');
    case '.google.protobuf.Struct':
      return structJson(m);
    case '.google.protobuf.Value':
      return valueJson(m);
    case '.google.protobuf.ListValue':
      return ((m.values as Msg[] | undefined) ?? []).map(valueJson);
    case '.google.protobuf.Any':
      return anyJson(m, opts);
    case PAYLOAD:
      if (opts.shorthand) {
        const short = payloadShorthand(m);
        if (short !== undefined) return short.value;
      }
      break;
    case PAYLOADS:
      if (opts.shorthand) {
        const list = (m.payloads as Msg[] | undefined) ?? [];
        const shorts = list.map(payloadShorthand);
        if (shorts.every((s) => s !== undefined)) return shorts.map((s) => (s as { value: Json }).value);
      }
      break;
    default:
      if (WRAPPERS.has(type.fullName)) {
        const f = type.fieldsArray[0];
        return own(m, 'value') ? scalarJson(f, m.value) : scalarJson(f, defaultScalar(f));
      }
  }
  const out: { [k: string]: Json } = {};
  for (const f of type.fieldsArray) {
    if (!own(m, f.name)) continue;
    const v = m[f.name];
    if (f.map) {
      const entries = Object.entries(v as Msg);
      if (entries.length === 0) continue;
      const obj: { [k: string]: Json } = {};
      for (const [k, val] of entries) obj[k] = valueOf(f, val, opts);
      out[f.name] = obj;
    } else if (f.repeated) {
      const arr = v as unknown[];
      if (arr.length === 0) continue;
      out[f.name] = arr.map((x) => valueOf(f, x, opts));
    } else {
      const t = fieldType(f);
      if (!f.partOf && !isType(t) && isDefault(f, v)) continue;
      out[f.name] = valueOf(f, v, opts);
    }
  }
  return out;
}

function valueOf(f: RField, v: unknown, opts: JsonOptions): Json {
  const t = fieldType(f);
  if (isType(t)) return toJson(t, v as object, opts);
  if (isEnum(t)) return enumJson(t, v);
  return scalarJson(f, v);
}

function enumJson(t: REnum, v: unknown): Json {
  const n = typeof v === 'number' ? v : Number(v);
  return t.valuesById[n] ?? n;
}

function isDefault(f: RField, v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (LONG_TYPES.has(f.type)) return Long.isLong(v) ? (v as Long).isZero() : Number(v) === 0;
  if (f.type === 'bytes') return (v as Uint8Array).length === 0;
  return v === 0 || v === '' || v === false;
}

function defaultScalar(f: RField): unknown {
  if (f.type === 'string') return '';
  if (f.type === 'bool') return false;
  if (f.type === 'bytes') return new Uint8Array();
  return 0;
}

function scalarJson(f: RField, v: unknown): Json {
  if (LONG_TYPES.has(f.type)) {
    if (Long.isLong(v)) {
      const l = v as Long;
      return (UNSIGNED_LONG.has(f.type) ? l.toUnsigned() : l).toString();
    }
    return String(v);
  }
  if (f.type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if (FLOAT_TYPES.has(f.type)) {
    const n = v as number;
    if (Number.isNaN(n)) return 'NaN';
    if (n === Infinity) return 'Infinity';
    if (n === -Infinity) return '-Infinity';
    return n;
  }
  return v as Json;
}

function secondsOf(m: Msg): bigint {
  const s = m.seconds;
  if (Long.isLong(s)) return BigInt((s as Long).toString());
  return BigInt(Math.trunc(Number(s ?? 0)));
}

/** 0, 3, 6 or 9 fractional digits, as the reference implementations print them. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const nine = String(nanos).padStart(9, '0');
  if (nine.endsWith('000000')) return `.${nine.slice(0, 3)}`;
  if (nine.endsWith('000')) return `.${nine.slice(0, 6)}`;
  return `.${nine}`;
}

function timestampJson(m: Msg): string {
  const secs = secondsOf(m);
  const nanos = Number(m.nanos ?? 0);
  const date = new Date(Number(secs) * 1000);
  if (Number.isNaN(date.getTime())) throw new Error('timestamp out of range');
  return `${date.toISOString().slice(0, 19)}${fraction(nanos)}Z`;
}

function durationJson(m: Msg): string {
  const secs = secondsOf(m);
  const nanos = Number(m.nanos ?? 0);
  const negative = secs < 0n || nanos < 0;
  const abs = (x: bigint): bigint => (x < 0n ? -x : x);
  return `${negative ? '-' : ''}${abs(secs).toString()}${fraction(Math.abs(nanos))}s`;
}

function structJson(m: Msg): Json {
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries((m.fields as Record<string, Msg> | undefined) ?? {})) out[k] = valueJson(v);
  return out;
}

function valueJson(m: Msg): Json {
  if (own(m, 'nullValue')) return null;
  if (own(m, 'numberValue')) return m.numberValue as number;
  if (own(m, 'stringValue')) return m.stringValue as string;
  if (own(m, 'boolValue')) return m.boolValue as boolean;
  if (own(m, 'structValue')) return structJson(m.structValue as Msg);
  if (own(m, 'listValue')) return (((m.listValue as Msg).values as Msg[] | undefined) ?? []).map(valueJson);
  return null;
}

function anyJson(m: Msg, opts: JsonOptions): Json {
  const typeUrl = String(m.typeUrl ?? '');
  const inner = lookupType(typeUrl.slice(typeUrl.lastIndexOf('/') + 1));
  if (!inner)
    return { '@type': typeUrl, value: Buffer.from((m.value as Uint8Array | undefined) ?? []).toString('base64') };
  const body = toJson(inner, inner.decode((m.value as Uint8Array | undefined) ?? new Uint8Array()), opts);
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && !specialJson(inner))
    return { '@type': typeUrl, ...body };
  return { '@type': typeUrl, value: body };
}

/** Types whose JSON is not an object of their fields (inside Any they go under "value"). */
function specialJson(t: RType): boolean {
  return t.fullName.startsWith('.google.protobuf.') || t.fullName === PAYLOAD || t.fullName === PAYLOADS;
}

function metadataOf(p: Msg): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((p.metadata as Record<string, Uint8Array> | undefined) ?? {}))
    out[k] = Buffer.from(v).toString('utf8');
  return out;
}

/** The shorthand of one payload, or undefined when it has none (README "HTTP API"). */
function payloadShorthand(p: Msg): { value: Json } | undefined {
  const md = metadataOf(p);
  const keys = Object.keys(md);
  const data = Buffer.from((p.data as Uint8Array | undefined) ?? []).toString('utf8');
  try {
    if (md.encoding === 'binary/null')
      return { value: { metadata: { encoding: Buffer.from('binary/null').toString('base64') } } };
    if (md.encoding === 'json/plain' && keys.length === 1) return { value: JSON.parse(data) as Json };
    if (md.encoding === 'json/protobuf' && md.messageType && keys.length === 2) {
      const obj = JSON.parse(data) as Json;
      if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
      return { value: { ...obj, _protoMessageType: md.messageType } };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

// ------------------------------------------------------------------------------------- input

/** A JSON value as a plain object of `type` for `Type.fromObject`. */
export function fromJson(type: RType, json: Json, opts: JsonOptions, where = type.fullName.slice(1)): Msg {
  const special = specialFromJson(type, json, opts, where);
  if (special !== undefined) return special;
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new JsonError(`${where}: expected an object`);
  const out: Msg = {};
  for (const [key, v] of Object.entries(json)) {
    const f = type.fieldsArray.find((x) => x.name === key || x.name === camelCase(key));
    if (!f) throw new JsonError(`${where}: unknown field "${key}"`);
    if (v === null && !(fieldType(f) as RType | null)?.fullName?.endsWith('.google.protobuf.Value')) continue;
    out[f.name] = fieldFromJson(f, v, opts, `${where}.${key}`);
  }
  return out;
}

function fieldFromJson(f: RField, v: Json, opts: JsonOptions, where: string): unknown {
  if (f.map) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new JsonError(`${where}: expected an object`);
    const out: Msg = {};
    for (const [k, val] of Object.entries(v)) out[k] = singleFromJson(f, val, opts, `${where}.${k}`);
    return out;
  }
  if (f.repeated) {
    if (!Array.isArray(v)) throw new JsonError(`${where}: expected an array`);
    return v.map((x, i) => singleFromJson(f, x, opts, `${where}[${i}]`));
  }
  return singleFromJson(f, v, opts, where);
}

function singleFromJson(f: RField, v: Json, opts: JsonOptions, where: string): unknown {
  const t = fieldType(f);
  if (isType(t)) return fromJson(t, v, opts, where);
  if (isEnum(t)) return enumFromJson(t, v, where);
  return scalarFromJson(f.type, v, where);
}

export function enumFromJson(t: REnum, v: Json, where: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string') {
    if (v in t.values) return t.values[v];
    if (/^-?\d+$/.test(v)) return Number(v);
  }
  throw new JsonError(`${where}: invalid value ${JSON.stringify(v)} for enum ${t.fullName.slice(1)}`);
}

export function scalarFromJson(type: string, v: Json, where: string): unknown {
  const bad = (): never => {
    throw new JsonError(`${where}: invalid ${type} value ${JSON.stringify(v)}`);
  };
  if (type === 'string') return typeof v === 'string' ? v : bad();
  if (type === 'bool') {
    if (typeof v === 'boolean') return v;
    if (v === 'true') return true;
    if (v === 'false') return false;
    return bad();
  }
  if (type === 'bytes') return typeof v === 'string' ? (base64Bytes(v) ?? bad()) : bad();
  if (LONG_TYPES.has(type)) {
    const s =
      typeof v === 'number' ? (Number.isInteger(v) ? String(v) : bad()) : typeof v === 'string' ? v.trim() : bad();
    if (!/^-?\d+$/.test(s)) return bad();
    const unsigned = UNSIGNED_LONG.has(type);
    if (unsigned && s.startsWith('-')) return bad();
    const n = BigInt(s);
    if (unsigned ? n > 0xffffffffffffffffn : n > 0x7fffffffffffffffn || n < -0x8000000000000000n) return bad();
    return Long.fromString(s, unsigned);
  }
  if (INT32_TYPES.has(type) || UINT32_TYPES.has(type)) {
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isInteger(n)) return bad();
    if (UINT32_TYPES.has(type) ? n < 0 || n > 0xffffffff : n < -0x80000000 || n > 0x7fffffff) return bad();
    return n;
  }
  if (FLOAT_TYPES.has(type)) {
    if (typeof v === 'number') return v;
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    return Number.isNaN(n) ? bad() : n;
  }
  return bad();
}

/** Standard or URL-safe base64, padded or not; undefined if it is neither. */
function base64Bytes(s: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(s)) return undefined;
  return Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Types with their own JSON form; undefined for an ordinary message. */
function specialFromJson(type: RType, json: Json, opts: JsonOptions, where: string): Msg | undefined {
  switch (type.fullName) {
    case '.google.protobuf.Timestamp':
      if (typeof json !== 'string') throw new JsonError(`${where}: expected an RFC 3339 timestamp string`);
      return parseTimestamp(json, where);
    case '.google.protobuf.Duration':
      if (typeof json !== 'string') throw new JsonError(`${where}: expected a duration string such as "1.5s"`);
      return parseDuration(json, where);
    case '.google.protobuf.FieldMask':
      if (typeof json !== 'string') throw new JsonError(`${where}: expected a field mask string`);
      return {
        paths: json === '' ? [] : json.split(',').map((p) => p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
      };
    case '.google.protobuf.Struct':
      if (json === null || typeof json !== 'object' || Array.isArray(json))
        throw new JsonError(`${where}: expected an object`);
      return structFromJson(json);
    case '.google.protobuf.Value':
      return valueFromJson(json);
    case '.google.protobuf.ListValue':
      if (!Array.isArray(json)) throw new JsonError(`${where}: expected an array`);
      return { values: json.map(valueFromJson) };
    case '.google.protobuf.Any':
      return anyFromJson(json, opts, where);
    case PAYLOAD:
      if (opts.shorthand) return payloadFromShorthand(json);
      return undefined;
    case PAYLOADS:
      if (opts.shorthand && Array.isArray(json)) return { payloads: json.map(payloadFromShorthand) };
      return undefined;
    default:
      if (WRAPPERS.has(type.fullName)) {
        const f = type.fieldsArray[0];
        return { value: scalarFromJson(f.type, json, where) };
      }
      return undefined;
  }
}

function parseTimestamp(s: string, where: string): Msg {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(s);
  const ms = m ? Date.parse(`${m[1]}${m[3].toUpperCase()}`) : NaN;
  if (!m || Number.isNaN(ms)) throw new JsonError(`${where}: invalid RFC 3339 timestamp ${JSON.stringify(s)}`);
  return { seconds: Long.fromNumber(Math.floor(ms / 1000)), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

function parseDuration(s: string, where: string): Msg {
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(s);
  if (!m) throw new JsonError(`${where}: invalid duration ${JSON.stringify(s)} (expected e.g. "1.5s")`);
  const sign = m[1] ? -1 : 1;
  const secs = Long.fromString(m[2]);
  const nanos = Number((m[3] ?? '').padEnd(9, '0'));
  return { seconds: sign < 0 ? secs.negate() : secs, nanos: sign * nanos };
}

function structFromJson(json: { [k: string]: Json }): Msg {
  const fields: Msg = {};
  for (const [k, v] of Object.entries(json)) fields[k] = valueFromJson(v);
  return { fields };
}

function valueFromJson(json: Json): Msg {
  if (json === null) return { nullValue: 0 };
  if (typeof json === 'number') return { numberValue: json };
  if (typeof json === 'string') return { stringValue: json };
  if (typeof json === 'boolean') return { boolValue: json };
  if (Array.isArray(json)) return { listValue: { values: json.map(valueFromJson) } };
  return { structValue: structFromJson(json) };
}

function anyFromJson(json: Json, opts: JsonOptions, where: string): Msg {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || typeof json['@type'] !== 'string') {
    throw new JsonError(`${where}: expected an object with "@type"`);
  }
  const typeUrl = json['@type'];
  const inner = lookupType(typeUrl.slice(typeUrl.lastIndexOf('/') + 1));
  if (!inner) throw new JsonError(`${where}: unknown type ${typeUrl}`);
  const { '@type': _drop, ...rest } = json;
  const body = specialJson(inner) ? (rest.value ?? null) : rest;
  const value = inner.encode(inner.fromObject(fromJson(inner, body, opts, where))).finish();
  return { typeUrl, value: Buffer.from(value) };
}

function bytesOf(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

/** One payload in shorthand or long form (README "HTTP API"). */
function payloadFromShorthand(json: Json): Msg {
  if (json === null) return { metadata: { encoding: bytesOf('binary/null') } };
  if (typeof json === 'object' && !Array.isArray(json)) {
    const long = longFormPayload(json);
    if (long) return long;
    if (typeof json._protoMessageType === 'string') {
      const { _protoMessageType: messageType, ...rest } = json;
      return {
        metadata: { encoding: bytesOf('json/protobuf'), messageType: bytesOf(messageType) },
        data: bytesOf(JSON.stringify(rest)),
      };
    }
  }
  return { metadata: { encoding: bytesOf('json/plain') }, data: bytesOf(JSON.stringify(json)) };
}

/** `{metadata: {k: base64}, data: base64}` (data may be absent for binary/null), else undefined. */
function longFormPayload(json: { [k: string]: Json }): Msg | undefined {
  const md = json.metadata;
  if (md === null || typeof md !== 'object' || Array.isArray(md) || typeof md.encoding !== 'string') return undefined;
  const keys = Object.keys(json);
  const metadata: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(md)) {
    const b = typeof v === 'string' ? base64Bytes(v) : undefined;
    if (!b) return undefined;
    metadata[k] = b;
  }
  if (keys.length === 1 && metadata.encoding.toString('utf8') === 'binary/null') return { metadata };
  if (keys.length !== 2 || typeof json.data !== 'string') return undefined;
  const data = base64Bytes(json.data);
  return data ? { metadata, data } : undefined;
}
