// tier: full
/**
 * The control plane with SVC_S3_PROXY_PORT (ADR 0188): an app that declares buckets gets its own key
 * file and the proxy's endpoint, and the proxy reads the app's declared access from its spec.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getApp } from '../../../store/control/apps.js';
import { request } from '../../helpers/servers.js';
import { git, initAppsRepo, pipelineConfig, startPlane, waitForApp } from '../../pipeline/pipeline-fixture.js';
import { startS3Server } from '../../helpers/s3-server.js';

test('a plane with the S3 proxy gives a bucket-declaring app its key and enforces its readOnly access', async (t) => {
  const { endpoint } = await startS3Server(t, ['photos']);
  const direct = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  t.teardown(() => direct.destroy());
  await direct.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'meow' }));

  const config = pipelineConfig(t, {
    SVC_S3_ENDPOINT: endpoint,
    SVC_S3_ACCESS_KEY: 'S3RVER',
    SVC_S3_SECRET_KEY: 'S3RVER',
    SVC_S3_PROXY_PORT: '0',
  });
  initAppsRepo(config);
  fs.mkdirSync(path.join(config.appsDir, 'gallery'));
  fs.writeFileSync(
    path.join(config.appsDir, 'gallery', 'infraspec.yaml'),
    'name: gallery\nprocesses:\n  web:\n    port: 8080\ninfrastructure:\n  objectStorage:\n    buckets:\n      - name: photos\n        access: readOnly\n',
  );
  git(config.appsDir, 'add', '-A');
  git(config.appsDir, 'commit', '-q', '-m', 'gallery');
  const plane = await startPlane(t, config);
  await waitForApp(plane, 'gallery');
  const wiring = plane.s3Proxy!;
  const settings = wiring.settingsFor('gallery', getApp(plane.db, 'gallery')!.spec!).s3!;
  t.is(settings.endpoint, wiring.proxy.url);
  t.not(settings.endpoint, endpoint, 'apps reach the proxy, never the S3 server itself');
  const ini = fs.readFileSync(settings.credentialsFile!, 'utf8');
  const secret = /aws_secret_access_key = (\S+)/.exec(ini)![1]!;
  const app = new S3Client({
    endpoint: settings.endpoint,
    region: settings.region ?? 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: settings.accessKeyId!, secretAccessKey: secret },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  t.teardown(() => app.destroy());
  const got = await app.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }));
  t.is(await got.Body?.transformToString(), 'meow');
  const error = await t.throwsAsync(app.send(new PutObjectCommand({ Bucket: 'photos', Key: 'dog.jpg', Body: 'woof' })));
  t.true(error instanceof S3ServiceException && error.name === 'AccessDenied');
  const metrics = await request(`${plane.url}/metrics`);
  t.regex(metrics.text, /svc_s3_proxy_refusals_total\{app="gallery",reason="access"\} 1/);
  t.regex(metrics.text, /svc_s3_proxy_requests_total\{app="gallery"\} 1/);
});
