; The effect mentions ?z, which is not among the parameters.
(define (domain bw)
  (:predicates (clear ?x) (on ?x ?y))
  (:action stack
    :parameters (?x ?y)
    :precondition (and (clear ?x) (clear ?y))
    :effect (and (on ?x ?y)
                 (not (clear ?z)))))
