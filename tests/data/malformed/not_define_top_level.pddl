; The top-level form is not (define ...).
(domain bw
  (:predicates (clear ?x)))
