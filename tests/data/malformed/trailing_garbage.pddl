; Text after the closing ')' of (define ...).
(define (domain bw)
  (:predicates (clear ?x)))

this is not pddl
