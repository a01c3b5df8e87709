SELECT @@server_id, @@hostname, @@port;
SHOW REPLICA STATUS;
SHOW SLAVE STATUS;
CREATE TABLE `dbprobe_heartbeat_0a1b2c3d4e` (id INT NOT NULL PRIMARY KEY, seq BIGINT NOT NULL, written_at DATETIME(6) NOT NULL) ENGINE=InnoDB;
INSERT INTO `dbprobe_heartbeat_0a1b2c3d4e` (id, seq, written_at) VALUES (1, 0, NOW(6));
UPDATE `dbprobe_heartbeat_0a1b2c3d4e` SET seq = ?, written_at = NOW(6) WHERE id = 1;
SELECT seq FROM `dbprobe_heartbeat_0a1b2c3d4e` WHERE id = 1;
SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND LEFT(table_name, ?) = ? ORDER BY 1;
