; A conditional effect (when ...).
(define (domain bw)
  (:predicates (clear ?x) (holding ?x) (heavy ?x))
  (:action pickup
    :parameters (?x)
    :precondition (clear ?x)
    :effect (and (holding ?x)
                 (when (heavy ?x) (not (clear ?x))))))
