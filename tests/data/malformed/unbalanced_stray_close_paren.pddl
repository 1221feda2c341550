; A ')' before anything was opened.
)
(define (domain bw)
  (:predicates (clear ?x)))
