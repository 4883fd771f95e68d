#!/usr/bin/env node
// An S3-compatible server on loopback for the tests: s3rver with one bucket,
// objects under DIR. s3rver itself checks only that the access key exists,
// so every request first passes our SigV4 check of the Authorization header
// (canonical request, scope, signing key) against the one key pair below;
// a request that fails it gets S3's 403 SignatureDoesNotMatch. Each request
// is logged as a JSON line to LOG (method, path, query, status, signed).
//
// usage: node serve.js DIR BUCKET LOG       prints "port=N" once listening
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const S3rver = require('s3rver');

const [dir, bucket, logPath] = process.argv.slice(2);
if (!dir || !bucket || !logPath) {
  process.stderr.write('usage: node serve.js DIR BUCKET LOG\n');
  process.exit(2);
}
// s3rver's built-in account (S3RVER/S3RVER) is the only key pair it knows
const SECRETS = { S3RVER: 'S3RVER' };
const MAX_SKEW_MS = 15 * 60 * 1000;

function hmac(key, text) {
  return crypto.createHmac('sha256', key).update(text, 'utf8').digest();
}

function sha256hex(text) {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

// RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone)
function enc(s) {
  return encodeURIComponent(s).replace(/[!'()*]/g, c =>
    '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

function canonicalQuery(raw) {
  if (!raw) return '';
  return raw.split('&').filter(Boolean).map(kv => {
    const i = kv.indexOf('=');
    const k = decodeURIComponent(i < 0 ? kv : kv.slice(0, i));
    const v = i < 0 ? '' : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, ' '));
    return [enc(k), enc(v)];
  }).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => k + '=' + v).join('&');
}

function canonicalPath(raw) {
  // each segment decoded once and encoded the SigV4 way ('/' stays)
  return raw.split('/').map(s => enc(decodeURIComponent(s))).join('/');
}

// null when the request is signed right, else why not
function checkSigV4(req) {
  const auth = req.headers.authorization;
  if (!auth) return 'no Authorization header';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return 'Authorization is not AWS4-HMAC-SHA256 for s3';
  const [, keyId, day, region, signedList, signature] = m;
  const secret = SECRETS[keyId];
  if (secret === undefined) return 'unknown access key ' + keyId;
  const amzDate = req.headers['x-amz-date'] || '';
  const t = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(amzDate);
  if (!t || amzDate.slice(0, 8) !== day) return 'x-amz-date missing or not of the scope\'s day';
  const when = Date.UTC(+t[1], +t[2] - 1, +t[3], +t[4], +t[5], +t[6]);
  if (Math.abs(Date.now() - when) > MAX_SKEW_MS) return 'x-amz-date too far from now';
  const payload = req.headers['x-amz-content-sha256'];
  if (!payload) return 'no x-amz-content-sha256 header';
  const signed = signedList.split(';');
  for (const need of ['host', 'x-amz-date', 'x-amz-content-sha256'])
    if (!signed.includes(need)) return need + ' is not signed';
  const headers = signed.map(h => {
    const v = req.headers[h];
    if (v === undefined) return null;
    return h + ':' + String(v).trim().replace(/\s+/g, ' ') + '\n';
  });
  if (headers.includes(null)) return 'a signed header is missing';
  const q = req.url.indexOf('?');
  const rawPath = q < 0 ? req.url : req.url.slice(0, q);
  const rawQuery = q < 0 ? '' : req.url.slice(q + 1);
  const creq = [req.method, canonicalPath(rawPath), canonicalQuery(rawQuery),
    headers.join(''), signedList, payload].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(creq)].join('\n');
  let k = hmac('AWS4' + secret, day);
  k = hmac(k, region);
  k = hmac(k, 's3');
  k = hmac(k, 'aws4_request');
  const want = crypto.createHmac('sha256', k).update(sts, 'utf8').digest('hex');
  return want === signature ? null : 'signature mismatch';
}

async function main() {
  fs.mkdirSync(dir, { recursive: true });
  const log = fs.openSync(logPath, 'a');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: path.resolve(dir),
    configureBuckets: [{ name: bucket }],
  });
  // first of all middleware: the signature check and the request log
  server.middleware.unshift(async (ctx, next) => {
    const why = checkSigV4(ctx.req);
    const entry = { method: ctx.method, url: ctx.url, signed: !why };
    if (why) {
      entry.why = why;
      ctx.status = 403;
      ctx.type = 'application/xml';
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch' +
        '</Code><Message>test server: ' + why.replace(/[<>&]/g, '_') + '</Message></Error>';
      entry.status = 403;
      fs.writeSync(log, JSON.stringify(entry) + '\n');
      return;
    }
    try {
      await next();
      entry.status = ctx.status;
    } catch (err) {
      entry.status = err.status || 500;
      throw err;
    } finally {
      fs.writeSync(log, JSON.stringify(entry) + '\n');
    }
  });
  const addr = await server.run();
  process.stdout.write(`port=${addr.port}\n`);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch(err => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
