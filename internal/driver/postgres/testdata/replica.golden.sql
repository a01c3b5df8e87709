SELECT (SELECT system_identifier::text FROM pg_control_system()),
       pg_is_in_recovery(),
       extract(epoch FROM pg_postmaster_start_time())::text;
CREATE TABLE "public"."dbprobe_heartbeat_0a1b2c3d" (id integer PRIMARY KEY, seq bigint NOT NULL, written_at timestamptz NOT NULL);
INSERT INTO "public"."dbprobe_heartbeat_0a1b2c3d" (id, seq, written_at) VALUES (1, 0, clock_timestamp());
UPDATE "public"."dbprobe_heartbeat_0a1b2c3d" SET seq = $1, written_at = clock_timestamp() WHERE id = 1;
SELECT seq FROM "public"."dbprobe_heartbeat_0a1b2c3d" WHERE id = 1;
SELECT relname::text FROM pg_class
 WHERE relnamespace = to_regnamespace(current_schema()) AND relkind = 'r' AND left(relname, length($1)) = $1
 ORDER BY relname;
