/**
 * Notification channels: create (with SSRF checks on the target), list without secrets, delete,
 * test delivery, and which channels an event goes to.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../store/database.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Severity } from '../../domain/events/event-port.js';
import type { Clock } from '../../domain/events/clock.js';
import { newEventId, type EventRecord } from '../../domain/events/event-record.js';
import { channelTarget, dropTarget } from '../../store/control/event-outbox.js';
import { channelView, type ChannelProvider, type ChannelRecord, type ChannelView } from '../../domain/events/index.js';
import { deleteChannel, getChannel, insertChannel, listChannels } from '../../store/control/notification-channels.js';
import { checkTargetUrl, type OutboundPolicy } from '../../platform/outbound/outbound-guard.js';
import { notifyChannel } from '../../platform/notifications/notifier.js';

/** A validated channel creation request. */
export interface CreateChannelRequest {
  readonly provider: ChannelProvider;
  readonly name: string;
  readonly url: string;
  readonly severities?: readonly Severity[];
  readonly token?: string;
  readonly userKey?: string;
}

/** What a test notification through one channel answers. */
export interface ChannelTestResult {
  readonly delivered: boolean;
  /** The provider's HTTP status (0 when it was not reached). */
  readonly status: number;
  readonly error: string | null;
}

/** Channel management and routing. */
export class NotificationService {
  private cache: ChannelRecord[] | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly outbound: OutboundPolicy,
    private readonly source: string,
    private readonly environment: string,
  ) {}

  private channels(): ChannelRecord[] {
    this.cache ??= listChannels(this.db);
    return this.cache;
  }

  list(): ChannelView[] {
    return this.channels().map(channelView);
  }

  create(req: CreateChannelRequest): ChannelView {
    checkTargetUrl(req.url, this.outbound);
    if (req.provider === 'mobile_push' && (req.token === undefined || req.userKey === undefined)) {
      throw new ValidationError('mobile_push needs token and userKey', {
        code: 'invalid_request',
        details: { fields: ['token', 'userKey'] },
      });
    }
    if (req.provider !== 'mobile_push' && req.userKey !== undefined) {
      throw new ValidationError(`userKey applies only to mobile_push, not ${req.provider}`, {
        code: 'invalid_request',
        details: { field: 'userKey' },
      });
    }
    if ((req.provider === 'embed_webhook' || req.provider === 'topic_push') && req.token !== undefined) {
      throw new ValidationError(`token applies only to mobile_push and webhook, not ${req.provider}`, {
        code: 'invalid_request',
        details: { field: 'token' },
      });
    }
    const record: ChannelRecord = {
      id: `ch_${randomBytes(8).toString('hex')}`,
      provider: req.provider,
      name: req.name,
      url: req.url,
      severities: req.severities === undefined || req.severities.length === 0 ? null : [...new Set(req.severities)],
      token: req.token ?? null,
      userKey: req.userKey ?? null,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    insertChannel(this.db, record);
    this.cache = undefined;
    return channelView(record);
  }

  remove(id: string): void {
    if (!deleteChannel(this.db, id))
      throw new NotFoundError(`notification channel ${id} does not exist`, {
        code: 'channel_not_found',
        details: { id },
      });
    dropTarget(this.db, channelTarget(id));
    this.cache = undefined;
  }

  /** Sends a synthetic event.test to one channel now and reports the outcome (not recorded as an event). */
  async test(id: string): Promise<ChannelTestResult> {
    const channel = getChannel(this.db, id);
    if (!channel)
      throw new NotFoundError(`notification channel ${id} does not exist`, {
        code: 'channel_not_found',
        details: { id },
      });
    const nowMs = this.clock.now();
    const eventId = newEventId(nowMs, randomBytes(16));
    const event: EventRecord = {
      id: eventId,
      source: this.source,
      app: '',
      environment: this.environment,
      type: 'event.test',
      severity: 'info',
      state: 'open',
      title: `Test notification for ${channel.name}`,
      body: 'If you can read this, the channel works.',
      dedupeKey: null,
      occurredAt: new Date(nowMs).toISOString(),
      snoozedUntil: null,
      metadata: { channelId: id },
      correlationKey: eventId,
      acknowledgement: null,
      recordedAt: new Date(nowMs).toISOString(),
    };
    const result = await notifyChannel(channel, event, this.outbound);
    return { delivered: result.ok, status: result.status, error: result.error ?? null };
  }

  /** Outbox targets of channels whose severity filter admits `severity`. */
  targetsFor(severity: Severity): string[] {
    return this.channels()
      .filter((c) => c.severities === null || c.severities.includes(severity))
      .map((c) => channelTarget(c.id));
  }
}
