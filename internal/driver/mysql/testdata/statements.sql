-- create, disk
CREATE TABLE `usertable` (`YCSB_KEY` VARBINARY(255) NOT NULL, `FIELD0` VARBINARY(100) NOT NULL, `FIELD1` VARBINARY(100) NOT NULL, `FIELD2` VARBINARY(100) NOT NULL, PRIMARY KEY (`YCSB_KEY`)) ENGINE=InnoDB COMMENT='created by dbprobe, id 0123456789abcdef';
-- create, memory
CREATE TABLE `usertable` (`YCSB_KEY` VARBINARY(255) NOT NULL, `FIELD0` VARBINARY(100) NOT NULL, `FIELD1` VARBINARY(100) NOT NULL, `FIELD2` VARBINARY(100) NOT NULL, PRIMARY KEY (`YCSB_KEY`) USING BTREE) ENGINE=MEMORY COMMENT='created by dbprobe, id 0123456789abcdef';
-- create, disk, rows too wide for VARBINARY
CREATE TABLE `usertable` (`YCSB_KEY` VARBINARY(255) NOT NULL, `FIELD0` BLOB NOT NULL, `FIELD1` BLOB NOT NULL, PRIMARY KEY (`YCSB_KEY`)) ENGINE=InnoDB COMMENT='created by dbprobe, id 0123456789abcdef';
-- read all
SELECT `FIELD0`, `FIELD1`, `FIELD2` FROM `usertable` WHERE `YCSB_KEY` = ?;
-- read some
SELECT `FIELD2`, `FIELD0` FROM `usertable` WHERE `YCSB_KEY` = ?;
-- scan all
SELECT `YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2` FROM `usertable` WHERE `YCSB_KEY` >= ? ORDER BY `YCSB_KEY` LIMIT ?;
-- scan one
SELECT `YCSB_KEY`, `FIELD1` FROM `usertable` WHERE `YCSB_KEY` >= ? ORDER BY `YCSB_KEY` LIMIT ?;
-- update all
UPDATE `usertable` SET `FIELD0` = ?, `FIELD1` = ?, `FIELD2` = ? WHERE `YCSB_KEY` = ?;
-- update one
UPDATE `usertable` SET `FIELD1` = ? WHERE `YCSB_KEY` = ?;
-- insert 1
INSERT INTO `usertable` (`YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2`) VALUES (?, ?, ?, ?);
-- insert 2
INSERT INTO `usertable` (`YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2`) VALUES (?, ?, ?, ?), (?, ?, ?, ?);
-- delete
DELETE FROM `usertable` WHERE `YCSB_KEY` = ?;
-- has rows
SELECT 1 FROM `usertable` LIMIT 1;
-- load data
LOAD DATA LOCAL INFILE 'Reader::dbprobe_1' INTO TABLE `usertable` CHARACTER SET binary FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' (`YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2`);
-- procedure dbprobe_usertable_read
CREATE PROCEDURE `dbprobe_usertable_read`(IN dbprobe_key VARBINARY(255)) READS SQL DATA SELECT `FIELD0`, `FIELD1`, `FIELD2` FROM `usertable` WHERE `YCSB_KEY` = dbprobe_key;
-- procedure dbprobe_usertable_scan
CREATE PROCEDURE `dbprobe_usertable_scan`(IN dbprobe_key VARBINARY(255), IN dbprobe_count INT) READS SQL DATA SELECT `YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2` FROM `usertable` WHERE `YCSB_KEY` >= dbprobe_key ORDER BY `YCSB_KEY` LIMIT dbprobe_count;
-- procedure dbprobe_usertable_update
CREATE PROCEDURE `dbprobe_usertable_update`(IN dbprobe_key VARBINARY(255), IN dbprobe_v0 VARBINARY(100), IN dbprobe_v1 VARBINARY(100), IN dbprobe_v2 VARBINARY(100)) MODIFIES SQL DATA BEGIN UPDATE `usertable` SET `FIELD0` = COALESCE(dbprobe_v0, `FIELD0`), `FIELD1` = COALESCE(dbprobe_v1, `FIELD1`), `FIELD2` = COALESCE(dbprobe_v2, `FIELD2`) WHERE `YCSB_KEY` = dbprobe_key; SELECT ROW_COUNT(); END;
-- procedure dbprobe_usertable_insert
CREATE PROCEDURE `dbprobe_usertable_insert`(IN dbprobe_key VARBINARY(255), IN dbprobe_v0 VARBINARY(100), IN dbprobe_v1 VARBINARY(100), IN dbprobe_v2 VARBINARY(100)) MODIFIES SQL DATA INSERT INTO `usertable` (`YCSB_KEY`, `FIELD0`, `FIELD1`, `FIELD2`) VALUES (dbprobe_key, dbprobe_v0, dbprobe_v1, dbprobe_v2);
-- procedure dbprobe_usertable_delete
CREATE PROCEDURE `dbprobe_usertable_delete`(IN dbprobe_key VARBINARY(255)) MODIFIES SQL DATA BEGIN DELETE FROM `usertable` WHERE `YCSB_KEY` = dbprobe_key; SELECT ROW_COUNT(); END;
-- call dbprobe_usertable_read
CALL `dbprobe_usertable_read`(?);
-- call dbprobe_usertable_scan
CALL `dbprobe_usertable_scan`(?, ?);
-- call dbprobe_usertable_update
CALL `dbprobe_usertable_update`(?, ?, ?, ?);
-- call dbprobe_usertable_insert
CALL `dbprobe_usertable_insert`(?, ?, ?, ?);
-- call dbprobe_usertable_delete
CALL `dbprobe_usertable_delete`(?);
-- drop dbprobe_usertable_read
DROP PROCEDURE IF EXISTS `dbprobe_usertable_read`;
-- drop dbprobe_usertable_scan
DROP PROCEDURE IF EXISTS `dbprobe_usertable_scan`;
-- drop dbprobe_usertable_update
DROP PROCEDURE IF EXISTS `dbprobe_usertable_update`;
-- drop dbprobe_usertable_insert
DROP PROCEDURE IF EXISTS `dbprobe_usertable_insert`;
-- drop dbprobe_usertable_delete
DROP PROCEDURE IF EXISTS `dbprobe_usertable_delete`;
