CREATE FUNCTION "public"."dbprobe_usertable_read"(varchar) RETURNS TABLE("field0" varchar, "field1" varchar, "field2" varchar) LANGUAGE sql STABLE AS $dbprobe$SELECT "field0", "field1", "field2" FROM "public"."usertable" WHERE "ycsb_key" = $1$dbprobe$;

CREATE FUNCTION "public"."dbprobe_usertable_scan"(varchar, integer) RETURNS TABLE("ycsb_key" varchar, "field0" varchar, "field1" varchar, "field2" varchar) LANGUAGE sql STABLE AS $dbprobe$SELECT "ycsb_key", "field0", "field1", "field2" FROM "public"."usertable" WHERE "ycsb_key" >= $1 ORDER BY "ycsb_key" LIMIT $2$dbprobe$;

CREATE FUNCTION "public"."dbprobe_usertable_update"(varchar, varchar, varchar, varchar) RETURNS integer LANGUAGE plpgsql AS $dbprobe$
#variable_conflict use_column
DECLARE affected integer;
BEGIN
  UPDATE "public"."usertable" SET "field0" = COALESCE($2, "field0"), "field1" = COALESCE($3, "field1"), "field2" = COALESCE($4, "field2") WHERE "ycsb_key" = $1;
  GET DIAGNOSTICS affected = ROW_COUNT;
  RETURN affected;
END
$dbprobe$;

CREATE FUNCTION "public"."dbprobe_usertable_insert"(varchar, varchar, varchar, varchar) RETURNS void LANGUAGE plpgsql AS $dbprobe$
BEGIN
  INSERT INTO "public"."usertable" ("ycsb_key", "field0", "field1", "field2") VALUES ($1, $2, $3, $4);
END
$dbprobe$;

CREATE FUNCTION "public"."dbprobe_usertable_delete"(varchar) RETURNS integer LANGUAGE plpgsql AS $dbprobe$
#variable_conflict use_column
DECLARE affected integer;
BEGIN
  DELETE FROM "public"."usertable" WHERE "ycsb_key" = $1;
  GET DIAGNOSTICS affected = ROW_COUNT;
  RETURN affected;
END
$dbprobe$;

-- signatures
"public"."dbprobe_usertable_read"(varchar)
"public"."dbprobe_usertable_scan"(varchar, integer)
"public"."dbprobe_usertable_update"(varchar, varchar, varchar, varchar)
"public"."dbprobe_usertable_insert"(varchar, varchar, varchar, varchar)
"public"."dbprobe_usertable_delete"(varchar)
