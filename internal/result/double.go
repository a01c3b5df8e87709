package result

// Double formats x as the text output prints a double (AverageLatency,
// Throughput): the way Java's Double.toString does, so that a figure in
// dbprobe report reads exactly as the line it came from.
func Double(x float64) string { return javaDouble(x) }
