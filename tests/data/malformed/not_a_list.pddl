; A bare word before the top-level form.
hello
(define (domain bw)
  (:predicates (clear ?x)))
