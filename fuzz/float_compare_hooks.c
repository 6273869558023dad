// GCC's -fsanitize-coverage=trace-cmp also traces float and double comparisons, through two hooks
// that neither the sanitizer runtime nor libFuzzer defines (libFuzzer learns from integer
// comparisons only). Empty and weak: the sanitizer tree's binaries that link a traced layer need
// them to link, and nothing is lost by ignoring those comparisons.
__attribute__((weak)) void __sanitizer_cov_trace_cmpf(float a, float b) {
  (void)a;
  (void)b;
}
__attribute__((weak)) void __sanitizer_cov_trace_cmpd(double a, double b) {
  (void)a;
  (void)b;
}
