/**
 * Throwaway X.509 material for the TLS tests, made at test time (nothing checked in, nothing from
 * outside the repository): a CA, and server or client certificates it issues. ECDSA P-256 keys from
 * WebCrypto, certificates built by @peculiar/x509 (node:crypto can read certificates but not make
 * them). The extensions are the ones rustls (the Temporal SDK's Rust core) insists on: a CA with
 * basicConstraints and keyCertSign, leaves with SANs and the matching extended key usage.
 *
 *   const ca = await makeCa('test CA');
 *   const server = await ca.issue({ commonName: 'server', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
 *   const files = writePem(dir, { 'ca.pem': ca.certPem, 'server.pem': server.certPem, ... });
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

type CryptoKey = crypto.webcrypto.CryptoKey;
type CryptoKeyPair = crypto.webcrypto.CryptoKeyPair;
// @peculiar/x509 finds Node's global WebCrypto (globalThis.crypto) by itself.

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 24 * 3600 * 1000;

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

export interface TestCa {
  certPem: string;
  /** A server (`usage` 'server', default) or client certificate signed by this CA. */
  issue(opts: {
    commonName: string;
    dnsNames?: string[];
    ips?: string[];
    usage?: 'server' | 'client';
  }): Promise<IssuedCertificate>;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return crypto.webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
}

function keyPem(key: CryptoKey): string {
  return crypto.KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Valid from yesterday (clock skew between processes does not matter) for a week. */
function validity(): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(Date.now() - DAY_MS), notAfter: new Date(Date.now() + 7 * DAY_MS) };
}

export async function makeCa(commonName: string): Promise<TestCa> {
  const keys = await keyPair();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: ALG,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: caCert.toString('pem'),
    async issue({ commonName: cn, dnsNames = [], ips = [], usage = 'server' }) {
      const leafKeys = await keyPair();
      const cert = await x509.X509CertificateGenerator.create({
        subject: `CN=${cn}`,
        issuer: caCert.subject,
        publicKey: leafKeys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: ALG,
        ...validity(),
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
          new x509.ExtendedKeyUsageExtension([
            usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
          ]),
          new x509.SubjectAlternativeNameExtension([
            ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
            ...ips.map((value) => ({ type: 'ip' as const, value })),
            ...(dnsNames.length + ips.length === 0 ? [{ type: 'dns' as const, value: cn }] : []),
          ]),
          await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
          await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
        ],
      });
      return { certPem: cert.toString('pem'), keyPem: keyPem(leafKeys.privateKey) };
    },
  };
}

/** Writes PEM files into `dir`; returns their paths by the names given. */
export function writePem<K extends string>(dir: string, files: Record<K, string>): Record<K, string> {
  fs.mkdirSync(dir, { recursive: true });
  const out = {} as Record<K, string>;
  for (const name of Object.keys(files) as K[]) {
    const p = path.join(dir, name);
    fs.writeFileSync(p, files[name], { mode: 0o600 });
    out[name] = p;
  }
  return out;
}
