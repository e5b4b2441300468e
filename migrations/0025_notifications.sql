-- Email notifications (docs/email.md): each person's settings, and one
-- row per notification, made from the published outbox events in the
-- publishing transaction together with its River job.

CREATE TABLE notification_settings (
    user_id          uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    email            text NOT NULL DEFAULT 'instant' CHECK (email IN ('instant', 'daily', 'off')),
    mention          boolean NOT NULL DEFAULT true,
    review_requested boolean NOT NULL DEFAULT true,
    decision         boolean NOT NULL DEFAULT true,
    due              boolean NOT NULL DEFAULT true,
    deposit          boolean NOT NULL DEFAULT true,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- A notification's id is its Message-ID: every attempt sends the same
-- mail. event_id names the outbox event it came from (no foreign key: the
-- events are purged after their retention); one per person, kind and event.
-- state: queued (its job will send it), sent, digest (waits for the daily
-- digest), digested, dropped (settings, lost access), failed (refused).
CREATE TABLE notifications (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id        bigint NOT NULL,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind            text NOT NULL CHECK (kind IN ('mention', 'review_requested', 'decision', 'deposit')),
    organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
    creative_id     uuid REFERENCES creatives (id) ON DELETE CASCADE,
    comment_id      uuid,
    deposit_id      uuid REFERENCES deposits (id) ON DELETE CASCADE,
    actor_name      text,
    detail          jsonb NOT NULL DEFAULT '{}',
    state           text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'sent', 'digest', 'digested', 'dropped', 'failed')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, user_id, kind)
);

CREATE INDEX notifications_digest_idx ON notifications (user_id, created_at) WHERE state = 'digest';
